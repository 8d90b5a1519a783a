build-dev/pipeline/batch.o: pipeline/batch.c pipeline/batch.h \
 pipeline/config.h storage/db.h storage/schema.h pipeline/pool.h \
 pipeline/pp.h pipeline/progress.h pipeline/strbuf.h pipeline/walk.h \
 pipeline/worker.h
pipeline/batch.h:
pipeline/config.h:
storage/db.h:
storage/schema.h:
pipeline/pool.h:
pipeline/pp.h:
pipeline/progress.h:
pipeline/strbuf.h:
pipeline/walk.h:
pipeline/worker.h:
