"""torch._dynamo.config: the knobs glasstorch's compile reads."""
# how many specialisations (cache entries) one compiled function keeps before running eagerly
recompile_limit = 8
cache_size_limit = recompile_limit      # the older name
# accepted for torch's scripts; glasstorch always specialises shapes (see README, "Where glasstorch differs")
automatic_dynamic_shapes = True
capture_scalar_outputs = False
suppress_errors = False
verbose = False
