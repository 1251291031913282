program estimate_dimension
  use qgml
end program estimate_dimension
