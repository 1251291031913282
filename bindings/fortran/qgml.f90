module qgml
  use, intrinsic :: iso_c_binding
  implicit none
end module qgml
