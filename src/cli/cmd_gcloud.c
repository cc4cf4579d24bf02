/*
 * cmd_gcloud.c - `flexq gcloud-config` and `flexq config kubeconfig`: the
 * client configurations that point gcloud and kubectl at flexqd.
 *
 * gcloud-config writes a named gcloud configuration (an INI file under
 * $CLOUDSDK_CONFIG, else ~/.config/gcloud, in configurations/config_NAME)
 * whose api_endpoint_overrides for container, serviceusage and
 * cloudresourcemanager are flexqd's address, whose project is --project,
 * and whose auth/access_token_file holds the flexq token (--token /
 * FLEXQ_TOKEN; a placeholder when flexqd runs without tokens, since gcloud
 * wants some credential), then makes it the active configuration unless
 * --no-activate. That is all a gcloud user needs: `gcloud container
 * clusters create`, `node-pools create`, `get-credentials` (whose
 * kubeconfig runs gke-gcloud-auth-plugin, which reads the same token
 * file) then work against flexqd.
 *
 * config kubeconfig asks flexqd for its HTTPS endpoint and CA
 * (GET /flexq/v1/tls) and prints a kubeconfig with them and the token, or
 * writes it to -o FILE (mode 0600).
 *
 * They do not: merge into an existing kubeconfig, or edit gcloud's other
 * configurations.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"

/* --flag=value or --flag value. */
static const char *opt(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static int write_file(const char *path, const char *text, int mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    fchmod(fd, (mode_t)mode);
    close(fd);
    return 0;
}

static int mkdirs(const char *dir)
{
    char *p = fq_xstrdup(dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0700);
            *s = '/';
        }
    int rc = mkdir(p, 0700) < 0 && errno != EEXIST ? -1 : 0;
    if (rc < 0)
        fprintf(stderr, "error: cannot create %s: %s\n", p, strerror(errno));
    free(p);
    return rc;
}

/* A configuration name gcloud accepts: lowercase letters, digits, '-'. */
static bool good_name(const char *s)
{
    if (!*s || strlen(s) > 60 || !(*s >= 'a' && *s <= 'z'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '-'))
            return false;
    return true;
}

static int gcloud_config(int argc, char **argv)
{
    const char *name = "flexq", *project = "flexq-local", *dir = NULL;
    bool activate = true;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = opt(argc, argv, &i, "--name")))
            name = v;
        else if ((v = opt(argc, argv, &i, "--project")))
            project = v;
        else if ((v = opt(argc, argv, &i, "--config-dir")))
            dir = v;
        else if (!strcmp(argv[i], "--no-activate"))
            activate = false;
        else
            return fq_cli_usage_error("gcloud-config",
                                      "unknown argument \"%s\"", argv[i]);
    }
    if (!good_name(name))
        return fq_cli_usage_error("gcloud-config",
                                  "--name: \"%s\" must be lowercase letters, "
                                  "digits and '-', starting with a letter",
                                  name);
    if (!good_name(project))
        return fq_cli_usage_error("gcloud-config",
                                  "--project: \"%s\" must be lowercase "
                                  "letters, digits and '-', starting with a "
                                  "letter",
                                  project);
    char *home = NULL;
    if (!dir)
        dir = getenv("CLOUDSDK_CONFIG");
    if (!dir || !*dir) {
        const char *h = getenv("HOME");
        dir = home = fq_xasprintf("%s/.config/gcloud", h && *h ? h : ".");
    }
    const struct fq_cli_global *g = fq_cli_global();
    const char *server = g->server;
    size_t sl = strlen(server);
    const char *slash = sl && server[sl - 1] == '/' ? "" : "/";
    char *confdir = fq_xasprintf("%s/configurations", dir);
    char *tokfile = fq_xasprintf("%s/flexq-%s.token", dir, name);
    char *conf = fq_xasprintf("%s/config_%s", confdir, name);
    char *tok = fq_xasprintf(
        "%s\n", g->token && *g->token ? g->token : "flexq-without-tokens");
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b,
                  "# Written by `flexq gcloud-config`: gcloud against flexqd "
                  "at %s\n"
                  "[core]\nproject = %s\ndisable_usage_reporting = True\n"
                  "[auth]\naccess_token_file = %s\n"
                  "[api_endpoint_overrides]\ncontainer = %s%s\n"
                  "serviceusage = %s%s\ncloudresourcemanager = %s%s\n"
                  "[component_manager]\ndisable_update_check = True\n",
                  server, project, tokfile, server, slash, server, slash,
                  server, slash);
    int rc = mkdirs(confdir);
    if (rc == 0)
        rc = write_file(tokfile, tok, 0600);
    if (rc == 0)
        rc = write_file(conf, fq_buf_str(&b), 0600);
    if (rc == 0 && activate) {
        char *active = fq_xasprintf("%s/active_config", dir);
        rc = write_file(active, name, 0600);
        free(active);
    }
    if (rc == 0)
        printf("Wrote gcloud configuration [%s] in %s%s: container, "
               "serviceusage and cloudresourcemanager at %s, project %s, "
               "token in %s.\n",
               name, dir, activate ? " (active)" : "", server, project,
               tokfile);
    fq_buf_release(&b);
    free(confdir);
    free(tokfile);
    free(conf);
    free(tok);
    free(home);
    return rc == 0 ? FQ_CLI_OK : FQ_CLI_FAIL;
}

const struct fq_cli_cmd fq_cli_cmd_gcloud = {
    "gcloud-config", gcloud_config,
    "Write a gcloud configuration that points at flexqd",
    "Usage: flexq gcloud-config [--name NAME] [--project ID] [--config-dir "
    "DIR]\n"
    "                           [--no-activate]\n"
    "\n"
    "Writes the gcloud configuration NAME (default flexq) with flexqd\n"
    "(--server) as the container, serviceusage and cloudresourcemanager\n"
    "endpoint, project ID (default flexq-local) and the token (--token /\n"
    "FLEXQ_TOKEN) as auth/access_token_file, and activates it. DIR is\n"
    "$CLOUDSDK_CONFIG, else ~/.config/gcloud. Then, for example:\n"
    "  gcloud container clusters create tpu-cluster --location=us-east5-b\n"
    "  gcloud container clusters get-credentials tpu-cluster "
    "--location=us-east5-b\n"
    "  kubectl get nodes\n"};

static int config_cmd(int argc, char **argv)
{
    const char *out = NULL, *context = "flexq";
    if (argc < 2 || strcmp(argv[1], "kubeconfig"))
        return fq_cli_usage_error("config", "the only subcommand is "
                                            "kubeconfig");
    for (int i = 2; i < argc; i++) {
        const char *v;
        if ((v = opt(argc, argv, &i, "--output")) ||
            (v = opt(argc, argv, &i, "-o")))
            out = v;
        else if ((v = opt(argc, argv, &i, "--context")))
            context = v;
        else
            return fq_cli_usage_error("config", "unknown argument \"%s\"",
                                      argv[i]);
    }
    if (!good_name(context))
        return fq_cli_usage_error("config",
                                  "--context: \"%s\" must be lowercase "
                                  "letters, digits and '-'",
                                  context);
    const struct fq_cli_global *g = fq_cli_global();
    struct fq_client *c = fq_client_new(NULL, NULL);
    struct fq_value *v = NULL;
    struct fq_err err = {0};
    int rc = fq_client_get(c, "/flexq/v1/tls", &v, &err);
    fq_client_free(c);
    if (rc < 0)
        return fq_cmd_fail(rc, &err);
    const char *ep = fq_value_path_str(v, "endpoint", NULL);
    const char *ca = fq_value_path_str(v, "caData", NULL);
    if (!ep || !ca) {
        fq_value_free(v);
        fprintf(stderr, "error: %s/flexq/v1/tls has no endpoint and caData\n",
                g->server);
        return FQ_CLI_FAIL;
    }
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b,
                  "apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n"
                  "  cluster:\n    server: https://%s\n"
                  "    certificate-authority-data: %s\nusers:\n- name: %s\n"
                  "  user:%s%s%s\ncontexts:\n- name: %s\n  context:\n"
                  "    cluster: %s\n    user: %s\n    namespace: default\n"
                  "current-context: %s\n",
                  context, ep, ca, context,
                  g->token && *g->token ? "\n    token: \"" : " {}",
                  g->token && *g->token ? g->token : "",
                  g->token && *g->token ? "\"" : "", context, context, context,
                  context);
    fq_value_free(v);
    if (out) {
        rc = write_file(out, fq_buf_str(&b), 0600);
        if (rc == 0)
            fprintf(stderr, "Wrote %s (context %s, server https://%s).\n", out,
                    context, ep);
    } else {
        fputs(fq_buf_str(&b), stdout);
    }
    fq_buf_release(&b);
    return rc == 0 ? FQ_CLI_OK : FQ_CLI_FAIL;
}

const struct fq_cli_cmd fq_cli_cmd_config = {
    "config", config_cmd, "Write a kubeconfig for flexqd's HTTPS address",
    "Usage: flexq config kubeconfig [-o FILE] [--context NAME]\n"
    "\n"
    "Prints (or writes to FILE, mode 0600) a kubeconfig whose server is\n"
    "flexqd's HTTPS address, with its CA and the token (--token /\n"
    "FLEXQ_TOKEN). kubectl and client libraries send a bearer token only\n"
    "over HTTPS. Context NAME defaults to flexq.\n"};
