build-dev/storage/db_rank.o: storage/db_rank.c storage/db.h \
 storage/schema.h pipeline/pp.h pipeline/rank_result.h pipeline/strbuf.h
storage/db.h:
storage/schema.h:
pipeline/pp.h:
pipeline/rank_result.h:
pipeline/strbuf.h:
