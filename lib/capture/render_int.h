/* SPDX-License-Identifier: MIT */
/* Helpers the text and JSON renderers share (render.c, render_json.c). */
#ifndef RDMAKIT_RENDER_INT_H
#define RDMAKIT_RENDER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* A packet's source or destination address as text; *family 4, 6 or 0 (LID). */
size_t render_addr_text(const struct wire_pkt *p, bool dst, char *out, int *family);
/* The packet's ECN codepoint (Not-ECT when it has no IP header). */
uint8_t render_pkt_ecn(const struct wire_pkt *p);

#endif
