
seq!2é中2a2bc2ghijBseq_0!2bc2ghij2a2é中Bseq_1