"""Independent oracles the tests compare the derived figures against: :mod:`.flops` tallies the
floating-point work numpy performs."""
