
seqBseq_0Js…þû@Bseq_1JÉ²°£(ÀBseq_2J.p,X;Mò?Bseq_3J| ^fôñ¿