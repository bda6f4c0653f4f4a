/*
 * The AWS credential sources the chain (creds.c) picks from.  Each fetch
 * returns a fresh lv__aws_creds or an error naming the source, never a secret,
 * a token, a response body or a command line.  A source that hangs is cut by
 * its timeout: the store's deadline for STS, containers and credential_process,
 * one second per request for IMDS (as the AWS SDKs).
 */
#ifndef LV_AWS_SOURCES_H
#define LV_AWS_SOURCES_H

#include "aws/creds.h"

enum lv__aws_source_kind {
	LV_AWS_SRC_STATIC = 1, /* options, environment, profile keys */
	LV_AWS_SRC_PROCESS,    /* credential_process */
	LV_AWS_SRC_WEBID,      /* STS AssumeRoleWithWebIdentity */
	LV_AWS_SRC_CONTAINER,  /* ECS / EKS Pod Identity */
	LV_AWS_SRC_IMDS,       /* EC2 instance metadata, IMDSv2 */
	LV_AWS_SRC_NONE        /* aws_skip_signature */
};

typedef struct lv__aws_source {
	int kind;
	char *label;            /* for describe and messages */
	lv__aws_creds *fixed;    /* STATIC */
	char *command;          /* PROCESS: run with /bin/sh -c */
	char *token_file, *role_arn, *session_name, *sts_url; /* WEBID */
	char *url, *auth_token, *auth_token_file;             /* CONTAINER */
	char *imds_base;        /* IMDS: scheme://host[:port], no trailing '/' */
	bool v1_fallback;
	int64_t timeout_ms;     /* PROCESS */
	lv__http *http;          /* HTTP sources */
} lv__aws_source;

/* Fetches credentials from `s` (STATIC: a new reference to the fixed ones). */
int lv__aws_source_fetch(lv__aws_source *s, lv__aws_creds **out, lv_error *err);
void lv__aws_source_dispose(lv__aws_source *s);

/* Whether a plain-HTTP container URL may carry credentials: loopback, or the ECS/EKS
 * link-local addresses (the AWS SDKs' rule). */
bool lv__aws_container_host_ok(const char *url);

#endif
