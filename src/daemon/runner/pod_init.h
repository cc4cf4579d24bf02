/*
 * pod_init.h - the init of a pod's pid namespace (pod_init.c): the runner
 * execs its own binary with argv[0] == FQ_POD_INIT_ARGV0, argv[1] the
 * command's path, then the command's arguments.
 */
#ifndef FLEXQ_POD_INIT_H
#define FLEXQ_POD_INIT_H

#define FQ_POD_INIT_ARGV0 "flexq-pod-init"

/* Referenced by the runner so that the linker keeps pod_init.o (and its
 * constructor) in every binary that runs pods. */
extern const char fq_pod_init_argv0[];

#endif
