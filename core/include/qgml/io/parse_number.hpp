// Strict parsing of numbers written as text (settings, command-line options, file headers): the whole
// text is the number, in decimal, independently of the C locale. One parser per type, used both to
// validate a value and to read it, so that what is checked is what is used.
#pragma once

#include <string_view>

namespace qgml {

// An integer: an optional sign and decimal digits, nothing else (no spaces, no exponent, no point, no
// "0x"). False when the text is not one or its value does not fit in a long long.
bool parse_integer(std::string_view text, long long& value);

// A real number: an optional sign, decimal digits with an optional point, an optional decimal exponent
// ("1.5", "-2e-3", ".5", "3."), nothing else. inf, nan, hexadecimal and values beyond the range of a
// double (overflow, or an underflow of a non-zero value to zero or to a subnormal) give false: no
// finite setting or header field is meant by them.
bool parse_real(std::string_view text, double& value);

}  // namespace qgml
