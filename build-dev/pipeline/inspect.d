build-dev/pipeline/inspect.o: pipeline/inspect.c pipeline/arena.h \
 pipeline/batch.h pipeline/classify.h pipeline/rank_result.h \
 pipeline/patterns.h pipeline/pp.h pipeline/strbuf.h \
 pipeline/trace_read.h
pipeline/arena.h:
pipeline/batch.h:
pipeline/classify.h:
pipeline/rank_result.h:
pipeline/patterns.h:
pipeline/pp.h:
pipeline/strbuf.h:
pipeline/trace_read.h:
