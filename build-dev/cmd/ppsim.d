build-dev/cmd/ppsim.o: cmd/ppsim.c pipeline/cli.h pipeline/config.h \
 pipeline/pp.h pipeline/sim.h pipeline/sim_input.h pipeline/sim.h \
 pipeline/sim_report.h pipeline/strbuf.h
pipeline/cli.h:
pipeline/config.h:
pipeline/pp.h:
pipeline/sim.h:
pipeline/sim_input.h:
pipeline/sim.h:
pipeline/sim_report.h:
pipeline/strbuf.h:
