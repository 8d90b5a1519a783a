build-dev/pipeline/agg_render.o: pipeline/agg_render.c pipeline/agg_int.h \
 pipeline/agg.h pipeline/arena.h pipeline/strbuf.h pipeline/gantt.h \
 pipeline/pp.h
pipeline/agg_int.h:
pipeline/agg.h:
pipeline/arena.h:
pipeline/strbuf.h:
pipeline/gantt.h:
pipeline/pp.h:
