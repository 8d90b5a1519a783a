build-dev/pipeline/agg_html.o: pipeline/agg_html.c pipeline/agg_int.h \
 pipeline/agg.h pipeline/arena.h pipeline/strbuf.h pipeline/pp.h \
 pipeline/safefile.h pipeline/topology.h
pipeline/agg_int.h:
pipeline/agg.h:
pipeline/arena.h:
pipeline/strbuf.h:
pipeline/pp.h:
pipeline/safefile.h:
pipeline/topology.h:
