/*
 * Two processes on 127.0.0.1: a sender keeps a filter of its keys and sends it to a
 * receiver over TCP, whole and then as two deltas, every frame tagged with a shared key;
 * each side prints what it holds. Frames delimit themselves: the receiver reads a header,
 * asks bw_frame_len how long the frame is, and reads the rest (never past it). It answers
 * each frame with one byte, so that the output reads in order. Stops by itself: three
 * frames, and a 10 s timeout on every socket.
 *
 *     cc -Icapi/include capi/examples/exchange.c target/release/libbloomwire_capi.a \
 *        -lpthread -ldl -lm -o exchange && ./exchange
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bloomwire.h"

#define GENERATIONS 3
/* A demo key: a real one comes from the application's secret store, never from source. */
static const uint8_t KEY[BW_KEY_LEN] = "bloomwire exchange example key!";
static const char *PROBES[] = {"user-1", "user-9999", "new-2-1", "new-3-1", "stranger"};

static void die(const char *what, bw_status s) {
    fprintf(stderr, "%s: %s (%s)\n", what, bw_status_name(s), bw_last_error_message());
    exit(1);
}
#define TRY(call) do { bw_status s_ = (call); if (s_ != BW_OK) die(#call, s_); } while (0)

static int io_all(int fd, void *buf, size_t len, int writing) {
    for (size_t done = 0; done < len;) {
        ssize_t n = writing ? write(fd, (char *)buf + done, len - done)
                            : read(fd, (char *)buf + done, len - done);
        if (n <= 0) return -1;
        done += (size_t)n;
    }
    return 0;
}

/* The next frame on the stream: read as far as the header says, never past the frame. */
static uint8_t *read_frame(int fd, size_t *len) {
    uint8_t *buf = NULL;
    size_t have = 0, want = 0;
    for (;;) {
        bw_error e;
        bw_status s = bw_frame_len(buf, have, NULL, &want);
        if (s == BW_ERR_INCOMPLETE) bw_last_error(&e), want = have + (size_t)e.needed;
        else if (s != BW_OK) die("bw_frame_len", s);
        if (have == want) break;
        if (want > (1u << 24) || !(buf = realloc(buf, want))) die("frame too long", s); /* ours */
        if (io_all(fd, buf + have, want - have, 0) != 0) return free(buf), NULL;
        have = want;
    }
    *len = have;
    return buf;
}

static void show(const char *who, uint64_t generation, const bw_filter *f) {
    uint64_t ones = 0;
    TRY(bw_filter_count_ones(f, &ones));
    printf("%-30s generation %llu, %llu one bits;", who, (unsigned long long)generation,
           (unsigned long long)ones);
    for (size_t i = 0; i < sizeof PROBES / sizeof *PROBES; i++) {
        bool yes = false;
        TRY(bw_filter_contains(f, PROBES[i], strlen(PROBES[i]), &yes));
        printf(" %s=%s", PROBES[i], yes ? "maybe" : "no");
    }
    printf("\n");
    fflush(stdout);
}

static int receiver(int port) {
    struct sockaddr_in addr = {0};
    struct timeval timeout = {10, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    bw_receiver *r = NULL;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) return perror("connect"), 1;
    TRY(bw_receiver_new(BW_KIND_BLOOM, NULL, KEY, sizeof KEY, &r));
    for (int g = 0; g < GENERATIONS; g++) {
        uint8_t ack = 1, *frame;
        size_t len = 0;
        bw_update u;
        bw_filter *held = NULL;
        char who[64];
        if (!(frame = read_frame(fd, &len))) return fprintf(stderr, "receiver: no frame\n"), 1;
        TRY(bw_receiver_receive(r, frame, len, &u));
        TRY(bw_receiver_filter(r, &held));
        snprintf(who, sizeof who, "receiver: %u-byte %s", (unsigned)len,
                 u.full ? "full frame" : "delta");
        show(who, u.generation, held);
        bw_filter_free(held);
        free(frame);
        if (io_all(fd, &ack, 1, 1) != 0) return 1;
    }
    bw_receiver_free(r);
    close(fd);
    return 0;
}

static int sender(int listener) {
    struct timeval timeout = {10, 0};
    struct pollfd ready = {listener, POLLIN, 0};
    int fd = poll(&ready, 1, 10000) == 1 ? accept(listener, NULL, NULL) : -1;
    bw_plan *plan = NULL;
    bw_filter *f = NULL;
    bw_encoder *e = NULL;
    bw_sender *s = NULL;
    char key[32];
    if (fd < 0) return perror("accept"), 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    TRY(bw_plan_for_rate(NULL, 10000, 0.01, &plan)); /* 10 000 keys at 1% */
    TRY(bw_filter_new_from_plan(plan, 0, &f));
    for (int i = 0; i < 10000; i++)
        TRY(bw_filter_insert(f, key, (size_t)snprintf(key, sizeof key, "user-%d", i)));
    TRY(bw_encoder_new(BW_KIND_BLOOM, &e));
    TRY(bw_encoder_set_key(e, KEY, sizeof KEY));
    TRY(bw_sender_new(e, 100, &s));
    for (int g = 1; g <= GENERATIONS; g++) {
        const uint8_t *frame;
        size_t len;
        uint8_t ack;
        for (int i = 0; g > 1 && i < 50; i++) /* 50 new keys a generation */
            TRY(bw_filter_insert(f, key, (size_t)snprintf(key, sizeof key, "new-%d-%d", g, i)));
        TRY(bw_sender_next_frame(s, f, &frame, &len));
        show("sender:", (uint64_t)g, f);
        if (io_all(fd, (void *)frame, len, 1) != 0 || io_all(fd, &ack, 1, 0) != 0)
            return fprintf(stderr, "sender: connection lost\n"), 1;
    }
    bw_sender_free(s);
    bw_encoder_free(e);
    bw_filter_free(f);
    bw_plan_free(plan);
    close(fd);
    return 0;
}

int main(void) {
    struct sockaddr_in addr = {0};
    socklen_t addr_len = sizeof addr;
    int listener = socket(AF_INET, SOCK_STREAM, 0), status = 1, rc;
    pid_t child;
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* 127.0.0.1 only, a port the OS picks */
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&addr, &addr_len) != 0)
        return perror("listen"), 1;
    fflush(stdout);
    child = fork();
    if (child < 0) return perror("fork"), 1;
    if (child == 0) {
        close(listener);
        return receiver(ntohs(addr.sin_port));
    }
    rc = sender(listener);
    close(listener);
    waitpid(child, &status, 0);
    printf("sender %s, receiver %s\n", rc == 0 ? "done" : "FAILED",
           WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "done" : "FAILED");
    return rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
