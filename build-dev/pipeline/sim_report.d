build-dev/pipeline/sim_report.o: pipeline/sim_report.c \
 pipeline/sim_report.h pipeline/sim.h pipeline/gantt.h pipeline/pp.h
pipeline/sim_report.h:
pipeline/sim.h:
pipeline/gantt.h:
pipeline/pp.h:
