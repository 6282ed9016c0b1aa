"""Guards on what a user hands in: files read only when they are regular and small enough (:mod:`.files`),
arrays checked to hold real numbers (:mod:`.arrays`), and memory and time bounded before anything large is
allocated or anything long begins (:mod:`.limits`).
"""
