build-dev/pipeline/pool.o: pipeline/pool.c storage/db.h storage/schema.h \
 pipeline/pool.h pipeline/pp.h pipeline/strbuf.h pipeline/worker.h
storage/db.h:
storage/schema.h:
pipeline/pool.h:
pipeline/pp.h:
pipeline/strbuf.h:
pipeline/worker.h:
