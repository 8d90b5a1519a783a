build-dev/pipeline/agg_db.o: pipeline/agg_db.c pipeline/agg_int.h \
 pipeline/agg.h pipeline/arena.h pipeline/strbuf.h pipeline/pp.h \
 storage/schema.h pipeline/topology.h
pipeline/agg_int.h:
pipeline/agg.h:
pipeline/arena.h:
pipeline/strbuf.h:
pipeline/pp.h:
storage/schema.h:
pipeline/topology.h:
