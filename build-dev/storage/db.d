build-dev/storage/db.o: storage/db.c storage/db.h storage/schema.h \
 pipeline/pp.h pipeline/strbuf.h pipeline/utf8.h
storage/db.h:
storage/schema.h:
pipeline/pp.h:
pipeline/strbuf.h:
pipeline/utf8.h:
