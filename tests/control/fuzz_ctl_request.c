/*
 * libFuzzer: any bytes sent by a client over the real control socket (as root, fake daemon
 * behind). The server must answer or disconnect, never crash, overrun or leak.
 */
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "fake_daemon.h"
#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tp_ctl_server *srv;
static char path[108];

/* libFuzzer exits through exit(): close the server so its socket file is removed. */
static void stop(void)
{
    tp_ctl_server_close(srv);
}

static void start(void)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    char json[2048];
    snprintf(path, sizeof(path), "/tmp/tp-fuzz-ctl-%d.sock", (int)getpid());
    snprintf(json, sizeof(json),
             "{\"eal\": {\"lcores\": \"0-1\"}, \"ports\": [{\"name\": \"p\", \"vdev\": \"n\"}],"
             " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p\"}], \"channels\": [\"c\"]}],"
             " \"channels\": [{\"name\": \"c\", \"protocol\": \"mdp3\","
             "   \"lines\": {\"a\": {\"group\": \"224.0.0.1\", \"port\": 1}}}],"
             " \"control\": {\"socket\": \"%s\", \"max_line_bytes\": 512}}",
             path);
    if (tp_config_load_string(json, NULL, &cfg, &errs) != 0 ||
        tp_ctl_server_open(&srv, &cfg, &fake_ops) != 0)
        abort();
    atexit(stop);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (srv == NULL)
        start();
    daemon_state.n_cmds = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, path);
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        return 0;
    }
    tp_ctl_server_poll(srv, 0);
    size_t sent = 0;
    while (sent < size) {
        ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += (size_t)n;
        tp_ctl_server_poll(srv, 0);
    }
    (void)!send(fd, "\n", 1, MSG_NOSIGNAL);
    char sink[65536];
    for (int i = 0; i < 4; i++) {
        tp_ctl_server_poll(srv, 0);
        while (recv(fd, sink, sizeof(sink), 0) > 0)
            ;
    }
    close(fd);
    tp_ctl_server_poll(srv, 0);
    return 0;
}
