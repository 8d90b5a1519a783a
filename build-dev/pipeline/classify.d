build-dev/pipeline/classify.o: pipeline/classify.c pipeline/arena.h \
 pipeline/classify.h pipeline/rank_result.h pipeline/classify_priv.h \
 pipeline/htab.h pipeline/patterns.h pipeline/pp.h pipeline/trace_read.h
pipeline/arena.h:
pipeline/classify.h:
pipeline/rank_result.h:
pipeline/classify_priv.h:
pipeline/htab.h:
pipeline/patterns.h:
pipeline/pp.h:
pipeline/trace_read.h:
