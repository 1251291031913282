#!/usr/bin/env bash
# check_notes_citations.sh SOURCE_DIR
# Fails when a file in core/, driver/, apps/, backends/, bindings/, perf/ (but perf/NOTES.md), docs/ or README.md
# cites a section of perf/NOTES.md by a title that is no heading of perf/NOTES.md. A citation is a quoted
# title next to `NOTES.md`, in one of two forms:
#  - after it: NOTES.md "Title", NOTES.md, "Title" or NOTES.md: "Title", and further titles chained to
#    the first by a comma, a semicolon, "and" or "or" (NOTES.md, "A", "B" and "C"). The title may go on
#    over the next two lines of a comment (//, #, !, * or nothing in front of them: Markdown);
#  - before it: "Title" in perf/NOTES.md (or in NOTES.md), the title starting on that line or the one
#    before.
# Not checked: a title that other words separate from NOTES.md or from the title before it (NOTES.md,
# "A", and the figures in "B": only A), and titles cited without NOTES.md next to them (the thresholds
# in core/include/qgml/plan/kernel_rules.hpp name their sections alone).
# A title matches a heading (any level, outside code blocks) that it equals or begins, up to a word
# boundary: citations may leave out the parenthesis that ends a heading, and "..." at the end of a title
# stands for the rest of the heading.
set -u
src=$1
cd "$src" || exit 2
notes=perf/NOTES.md
if [ ! -f "$notes" ]; then
  echo "FAIL: no $notes in $src"
  exit 1
fi
files=$( { grep -rlI -F 'NOTES.md' core driver apps backends bindings perf docs 2>/dev/null
           grep -lI -F 'NOTES.md' README.md 2>/dev/null; } | grep -vxF "$notes" | sort)
report=$(for f in $files; do
  awk -v notes="$notes" -v file="$f" '
    function lead(s) { sub(/^[ \t]*((\/\/+|#+|!+|\*+)[ \t]*)?/, "", s); return s }
    function known(t,   h, c, k) {
      gsub(/[ \t]+/, " ", t); sub(/^ /, "", t); sub(/ $/, "", t)
      sub(/[ ,;:]*(\.\.\.|…)$/, "", t)
      if (t == "") return 0
      for (k = 1; k <= nh; k++) {
        h = head[k]
        if (index(h, t) != 1) continue
        if (length(h) == length(t)) return 1
        c = substr(h, length(t) + 1, 1)
        if (c !~ /[[:alnum:]_]/ || substr(t, length(t), 1) !~ /[[:alnum:]_]/) return 1
      }
      return 0
    }
    function check(i, t) {
      checked++
      if (!known(t)) { gsub(/[ \t]+/, " ", t); printf "  %s:%d: \"%s\"\n", file, i, t }
    }
    BEGIN {
      fence = 0
      while ((getline l < notes) > 0) {
        if (l ~ /^```/) fence = !fence
        if (!fence && l ~ /^#+ /) { sub(/^#+ /, "", l); sub(/[ \t]+$/, "", l); head[++nh] = l }
      }
    }
    { line[FNR] = $0 }
    END {
      for (i = 1; i <= FNR; i++) {
        # The title after NOTES.md, on this line and the next two.
        rest = line[i]
        while ((p = index(rest, "NOTES.md")) > 0) {
          rest = substr(rest, p + 8)
          t = rest
          if (i + 1 <= FNR) t = t " " lead(line[i + 1])
          if (i + 2 <= FNR) t = t " " lead(line[i + 2])
          if (!match(t, /^[ \t]*[,:]?[ \t]*"[^"]*"/)) continue
          m = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
          sub(/^[^"]*"/, "", m); sub(/"$/, "", m); check(i, m)
          while (match(t, /^[ \t]*[,;]?[ \t]*((and|or)[ \t]+)?"[^"]*"/)) {
            m = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
            sub(/^[^"]*"/, "", m); sub(/"$/, "", m); check(i, m)
          }
        }
        # The title before "in perf/NOTES.md", from this line or the one before.
        if (line[i] ~ /"[ \t]+in[ \t]+(perf\/)?NOTES\.md/) {
          t = lead(line[i])
          if (i > 1) t = lead(line[i - 1]) " " t
          if (match(t, /"[^"]*"[ \t]+in[ \t]+(perf\/)?NOTES\.md/)) {
            m = substr(t, RSTART + 1, RLENGTH - 1); sub(/"[ \t]+in[ \t]+(perf\/)?NOTES\.md$/, "", m)
            check(i, m)
          }
        }
      }
      printf "#count %d\n", checked
    }' "$f"
done)
count=$(printf '%s\n' "$report" | awk '/^#count / { n += $2 } END { print n + 0 }')
missing=$(printf '%s\n' "$report" | grep -v '^#count ')
if [ -n "$missing" ]; then
  echo "FAIL: sources cite sections that are no heading of $notes (file:line, the title cited):"
  echo "$missing"
  exit 1
fi
nfiles=$(printf '%s\n' "$files" | grep -c .)
echo "ok: $count citations of $notes sections (in $nfiles files of core/, apps/, backends/, bindings/, perf/, docs/, README.md that name it) are its headings"
