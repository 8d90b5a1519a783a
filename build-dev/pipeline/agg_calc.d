build-dev/pipeline/agg_calc.o: pipeline/agg_calc.c pipeline/agg.h \
 pipeline/pp.h pipeline/topology.h pipeline/strbuf.h
pipeline/agg.h:
pipeline/pp.h:
pipeline/topology.h:
pipeline/strbuf.h:
