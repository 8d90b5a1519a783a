build-dev/pipeline/agg_chart.o: pipeline/agg_chart.c pipeline/agg_int.h \
 pipeline/agg.h pipeline/arena.h pipeline/strbuf.h pipeline/gantt.h \
 pipeline/pp.h pipeline/safefile.h
pipeline/agg_int.h:
pipeline/agg.h:
pipeline/arena.h:
pipeline/strbuf.h:
pipeline/gantt.h:
pipeline/pp.h:
pipeline/safefile.h:
