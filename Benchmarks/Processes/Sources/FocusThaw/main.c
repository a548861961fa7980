// focus-thaw: the anchor of `LifecycleBench thaw`, the least a program can do to thaw an app
// when one of its windows is focused. It subscribes to sway's window events (IPC SUBSCRIBE
// ["window"]) and, once armed, writes "0" to the armed cgroup.freeze as soon as a `focus` event
// names the armed app id. Nothing else: no tree, no PID lookup, no D-Bus, no state file.
//
//   focus-thaw SWAYSOCK
//   standard input:  "arm APP_ID PATH" (PATH a cgroup.freeze, opened at once)
//   standard output: "ready" once subscribed, "armed" after each arm, "thawed" after each write
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void say(const char *line) {
    size_t length = strlen(line);
    if (write(1, line, length) != (ssize_t)length) exit(1);
}

static int read_all(int fd, void *buffer, size_t length) {
    char *bytes = buffer;
    while (length > 0) {
        ssize_t count = read(fd, bytes, length);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return -1;
        bytes += count;
        length -= (size_t)count;
    }
    return 0;
}

static int send_message(int fd, uint32_t type, const char *payload) {
    uint32_t length = (uint32_t)strlen(payload);
    char header[14];
    memcpy(header, "i3-ipc", 6);
    memcpy(header + 6, &length, 4);  // little-endian host (x86-64, arm64)
    memcpy(header + 10, &type, 4);
    if (write(fd, header, sizeof header) != (ssize_t)sizeof header) return -1;
    return write(fd, payload, length) == (ssize_t)length ? 0 : -1;
}

// The string value of the first member `name` in `json` ("name": "value"), copied into `out`.
static int string_member(const char *json, const char *name, char *out, size_t size) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", name);
    const char *at = strstr(json, quoted);
    if (!at) return -1;
    at += strlen(quoted);
    while (*at == ' ' || *at == ':') at++;
    if (*at != '"') return -1;
    at++;
    size_t length = 0;
    while (at[length] && at[length] != '"' && length + 1 < size) length++;
    memcpy(out, at, length);
    out[length] = 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: focus-thaw SWAYSOCK\n");
        return 64;
    }
    int sway = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", argv[1]);
    if (sway < 0 || connect(sway, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("focus-thaw: connect");
        return 1;
    }
    if (send_message(sway, 2, "[\"window\"]") != 0) return 1;

    char armed_app[256] = "";
    int armed_file = -1;
    char input[1024];
    size_t input_length = 0;
    size_t capacity = 1 << 16;
    char *payload = malloc(capacity);
    int subscribed = 0;
    struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = sway, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (fds[1].revents) {
            char header[14];
            uint32_t length, type;
            if (read_all(sway, header, sizeof header) != 0) return 1;
            memcpy(&length, header + 6, 4);
            memcpy(&type, header + 10, 4);
            if (length + 1 > capacity) {
                capacity = length + 1;
                payload = realloc(payload, capacity);
            }
            if (read_all(sway, payload, length) != 0) return 1;
            payload[length] = 0;
            if (type == 2 && !subscribed) {
                subscribed = 1;
                say("ready\n");
            } else if (type == 0x80000003u && armed_file >= 0) {
                char change[32], app[256];
                if (string_member(payload, "change", change, sizeof change) == 0 && strcmp(change, "focus") == 0
                    && string_member(payload, "app_id", app, sizeof app) == 0 && strcmp(app, armed_app) == 0) {
                    if (write(armed_file, "0", 1) != 1) perror("focus-thaw: write");
                    close(armed_file);
                    armed_file = -1;
                    say("thawed\n");
                }
            }
        }
        if (fds[0].revents) {
            ssize_t count = read(0, input + input_length, sizeof input - 1 - input_length);
            if (count <= 0) return 0;
            input_length += (size_t)count;
            char *newline;
            while ((newline = memchr(input, '\n', input_length))) {
                *newline = 0;
                char app[256], path[512];
                if (sscanf(input, "arm %255s %511s", app, path) == 2) {
                    if (armed_file >= 0) close(armed_file);
                    armed_file = open(path, O_WRONLY | O_CLOEXEC);
                    if (armed_file < 0) perror("focus-thaw: open");
                    snprintf(armed_app, sizeof armed_app, "%s", app);
                    say("armed\n");
                }
                size_t used = (size_t)(newline - input) + 1;
                memmove(input, newline + 1, input_length - used);
                input_length -= used;
            }
        }
    }
}
