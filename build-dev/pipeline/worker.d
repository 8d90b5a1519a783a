build-dev/pipeline/worker.o: pipeline/worker.c pipeline/arena.h \
 pipeline/batch.h pipeline/classify.h pipeline/rank_result.h storage/db.h \
 storage/schema.h pipeline/patterns.h pipeline/pp.h pipeline/strbuf.h \
 pipeline/trace_read.h pipeline/walk.h pipeline/worker.h
pipeline/arena.h:
pipeline/batch.h:
pipeline/classify.h:
pipeline/rank_result.h:
storage/db.h:
storage/schema.h:
pipeline/patterns.h:
pipeline/pp.h:
pipeline/strbuf.h:
pipeline/trace_read.h:
pipeline/walk.h:
pipeline/worker.h:
