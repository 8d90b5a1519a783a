build-dev/storage/merge.o: storage/merge.c pipeline/batch.h storage/db.h \
 storage/schema.h pipeline/pp.h pipeline/strbuf.h
pipeline/batch.h:
storage/db.h:
storage/schema.h:
pipeline/pp.h:
pipeline/strbuf.h:
