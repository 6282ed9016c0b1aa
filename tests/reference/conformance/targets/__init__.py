"""Functions for ``formal-transformers conform`` to check, as files it loads by path
(``path/to/file.py:function``) the way it loads a user's:

- :mod:`.catalogue`: every entry of the shipped mutant catalogue by its name (``catalogue.py:attention_correct``,
  ``catalogue.py:attention_divides_by_d``);
- :mod:`.mechanics`: what conform checks before any property of the spec — a wrong shape, text returned, a
  raise, a wrong signature, a name that is not a function, the biases required;
- :mod:`.hostile`: functions that hang, exit, crash, print or return what is not an array;
- ``exits_at_import.py``, ``interrupts_at_import.py``: modules that end their import.

:data:`HANG_LIMIT` is how long a test lets conform take on a hostile target before calling it hung.
"""

#: Seconds: a conform run on a hostile target that takes longer has hung (its --timeout or the worker's end did
#: not stop it).  A hang detector, not a speed check: each such run was measured at under 3 s on 2 busy cores.
HANG_LIMIT = 60
