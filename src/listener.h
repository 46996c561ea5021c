#ifndef TW_LISTENER_H
#define TW_LISTENER_H

struct tw_config;

/* Binds, accepts, enforces limits, forks a session per connection. */
void listener_run(const struct tw_config *cfg) __attribute__((noreturn));

#endif
