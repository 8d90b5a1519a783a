build-dev/pipeline/topology.o: pipeline/topology.c pipeline/topology.h \
 pipeline/strbuf.h pipeline/pp.h
pipeline/topology.h:
pipeline/strbuf.h:
pipeline/pp.h:
