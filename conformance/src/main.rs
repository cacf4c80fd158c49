//! The `conformance` command: `check` (every rule, in five report formats),
//! `graph`, `crds`, `substitutions`, `l1-plan`, `config check` and
//! `explain`. Each subcommand that reads a repository opens one
//! [`Session`] from its `--repo`/`--renderer` arguments.
//!
//! Exit status: 0 when no error-severity finding, 1 when at least one, 2 when
//! the run itself failed (bad arguments, unreadable repository, invalid
//! configuration, no renderer, no cluster), with the cause on stderr.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};

use conformance::check::{CheckOptions, check};
use conformance::graph::TierGraph;
use conformance::render::Choice;
use conformance::report;
use conformance::rules;
use conformance::session::Session;

#[derive(Debug, Parser)]
#[command(
    name = "conformance",
    version,
    about = "Conformance checks for Flux GitOps repositories"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What every subcommand that reads a repository takes.
#[derive(Debug, clap::Args)]
struct RepoArgs {
    /// The repository root: the checkout of the GitRepository Flux syncs
    /// (spec.path of every Flux Kustomization is relative to it).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// How kustomize builds run: native (built in, default), kustomize (the
    /// kustomize or kubectl program), auto (native, and the program for what
    /// native does not support). Overrides `renderer` in conformance.yaml.
    #[arg(long, value_enum)]
    renderer: Option<RendererArg>,
    /// Fetch remote kustomize bases (URLs, git references) as Flux would, so
    /// their tiers are checked whole; cached in $CONFORMANCE_CACHE_DIR (else
    /// ~/.cache/conformance). Overrides `remote` in conformance.yaml.
    #[arg(long)]
    fetch_remote: bool,
    /// Check this directory as a cluster's entry, as `clusters.<name>.entry`
    /// in conformance.yaml declares one (repeatable): for a repository that
    /// a fleet repository syncs, with no Flux Kustomization of its own.
    #[arg(long = "entry", value_name = "DIR")]
    entries: Vec<String>,
    /// Read this conformance.yaml instead of the one at the repository
    /// root (a CI job keeping its settings outside the repository).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

impl RepoArgs {
    /// Resolves the run once: configuration, renderer, index and model.
    fn open(&self) -> Result<Session, conformance::check::SessionError> {
        Session::open_overriding(
            &self.repo,
            &conformance::session::Overrides {
                renderer: self.renderer.map(Choice::from),
                remote: self.remote(),
                entries: self.entries.clone(),
                config: self.config.clone(),
            },
        )
    }

    /// `--fetch-remote`, when given.
    fn remote(&self) -> Option<conformance::remote::Setting> {
        self.fetch_remote
            .then_some(conformance::remote::Setting::Fetch)
    }
}

/// One cluster, for the subcommands that show a single cluster.
#[derive(Debug, clap::Args)]
struct ClusterArg {
    /// The cluster (as discovered: the shortest unique tail of its entry path).
    #[arg(long = "cluster", value_name = "NAME")]
    cluster: String,
}

/// The clusters a subcommand reports (all when none is named).
#[derive(Debug, clap::Args)]
struct ClusterFilter {
    /// Only this cluster (repeatable; all when absent). Rules still see every
    /// cluster, so parity is judged against the whole repository.
    #[arg(long = "cluster", value_name = "NAME")]
    clusters: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RendererArg {
    Native,
    Kustomize,
    Auto,
}

impl From<RendererArg> for Choice {
    fn from(r: RendererArg) -> Choice {
        match r {
            RendererArg::Native => Choice::Native,
            RendererArg::Kustomize => Choice::Kustomize,
            RendererArg::Auto => Choice::Auto,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Discover every cluster, render every Kustomization, run every rule.
    Check {
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        clusters: ClusterFilter,
        /// The report: human (blocks with snippets), json (the documented
        /// document), junit (XML), sarif (2.1.0, for code scanning), github
        /// (Actions annotations).
        #[arg(long, value_enum, default_value_t = report::Format::Human)]
        format: report::Format,
        /// Also write the report in FORMAT to PATH, from the same run
        /// (repeatable: `--output sarif=out.sarif --output json=out.json`).
        #[arg(long, value_name = "FORMAT=PATH", value_parser = parse_output)]
        output: Vec<(report::Format, PathBuf)>,
        /// Where the rules are documented (the README this binary came
        /// with, e.g. https://github.com/OWNER/REPO/blob/REF/README.md):
        /// SARIF's informationUri and each rule's helpUri (its row of the
        /// rule table). Without it the SARIF report has neither.
        #[arg(long, value_name = "URL")]
        doc_url: Option<String>,
        /// A previous git revision to compare with (prune-transient); read
        /// with `git archive`, nothing is written to the repository.
        #[arg(long, value_name = "REV", conflicts_with = "base_dir")]
        base: Option<String>,
        /// A directory holding the previous tree, instead of a revision.
        #[arg(long, value_name = "DIR")]
        base_dir: Option<PathBuf>,
    },
    /// Print the objects Flux would apply, after every build step and
    /// postBuild substitution, as YAML in apply order (tiers as a cold start
    /// reconciles them, each in Flux's stages), Secret values redacted.
    Build {
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        cluster: ClusterArg,
        /// Only this Kustomization (`name` or `namespace/name`).
        #[arg(long = "kustomization", value_name = "NAME")]
        kustomization: Option<String>,
    },
    /// Per cluster and Kustomization, the rendered objects added, removed or
    /// changed since a previous revision (Secret values redacted). Exit 0
    /// whatever changed.
    Diff {
        #[command(flatten)]
        repo: RepoArgs,
        /// The previous git revision (read with `git archive`; nothing is
        /// written to the repository).
        #[arg(
            long,
            value_name = "REV",
            conflicts_with = "base_dir",
            required_unless_present = "base_dir"
        )]
        base: Option<String>,
        /// A directory holding the previous tree, instead of a revision.
        #[arg(long, value_name = "DIR")]
        base_dir: Option<PathBuf>,
        #[command(flatten)]
        clusters: ClusterFilter,
        /// human (unified diffs), json, or markdown (a pull-request comment
        /// with a summary table and collapsible sections).
        #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
        format: DiffFormat,
    },
    /// Print a cluster's tier graph in canonical form (sorted, one line each).
    Graph {
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// Audit every kind a cluster uses: per tier, where its API comes from and
    /// whether it exists when the tier is dry-run on a cold cluster.
    Crds {
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        cluster: ClusterArg,
        /// One table row per tier and kind however wide (by default a
        /// table wider than 100 columns is grouped by tier).
        #[arg(long)]
        wide: bool,
    },
    /// The postBuild substitution audit: one line per Kustomization, then the
    /// hazards and unaudited tokens with file:line.
    Substitutions {
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        clusters: ClusterFilter,
    },
    /// Print the live-cluster (l1-cluster) plan: the Flux mode's per-tier
    /// prediction (converges, race, deadlock), then the apply mode's tiers,
    /// stages and assertions.
    L1Plan {
        #[command(flatten)]
        repo: RepoArgs,
        /// The cluster; default: l1.cluster in conformance.yaml, else the
        /// first discovered.
        #[arg(long = "cluster", value_name = "NAME")]
        cluster: Option<String>,
    },
    /// Validate conformance.yaml (syntax, keys, paths, regexes, dates, and the
    /// cluster names it uses against discovery).
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Describe a rule: what it catches, the Flux behaviour behind it, the fix.
    Explain {
        /// A rule id, e.g. dependency-missing.
        rule: String,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigAction {
    /// Exit 0 when conformance.yaml is valid, 2 with file:line and the cause
    /// when not.
    Check {
        #[command(flatten)]
        repo: RepoArgs,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    Human,
    Json,
    Markdown,
}

/// A check allocates millions of small nodes from two threads: mimalloc
/// (see conformance/Cargo.toml) is about a third faster than the system
/// allocator and keeps a third less resident.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Progress on stderr only when a person watches it (never in a pipe,
    // a CI log or a test); CONFORMANCE_NO_PROGRESS turns it off.
    if std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("CONFORMANCE_NO_PROGRESS").is_none()
    {
        conformance::progress::enable();
    }
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            conformance::progress::clear();
            eprintln!(
                "conformance: {}",
                conformance::report::text_safe(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    };
    if std::env::var_os("CONFORMANCE_STATS").is_some() {
        // Peak resident memory, for the benchmarks (Linux only).
        if let Some(kb) = conformance::stats::status_kb("VmHWM:") {
            eprintln!("peak_rss_kb={kb}");
        }
    }
    code
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check {
            repo,
            clusters: ClusterFilter { clusters },
            format,
            output,
            doc_url,
            base,
            base_dir,
        } => {
            let started = Instant::now();
            let options = CheckOptions {
                repo: repo.repo.clone(),
                clusters: clusters.clone(),
                renderer: repo.renderer.map(Choice::from),
                remote: repo.remote(),
                entries: repo.entries.clone(),
                config: repo.config.clone(),
                base: base
                    .map(conformance::base::Base::Rev)
                    .or(base_dir.map(conformance::base::Base::Dir)),
            };
            let outcome = check(&options)?;
            let repo_arg = repo.repo.display().to_string();
            let report_options = report::Options {
                repo: &repo_arg,
                clusters: &clusters,
                elapsed: started.elapsed(),
                doc_url: doc_url.as_deref(),
            };
            // Every format from the one outcome: the files first, so a
            // report that cannot be written fails the command before
            // anything is printed.
            for (format, path) in &output {
                let text = report::render(*format, &outcome, &report_options)?;
                report::output::write(path, &text)?;
            }
            let text = report::render(format, &outcome, &report_options)?;
            print(&text)?;
            Ok(if outcome.errors() > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Build {
            repo,
            cluster: ClusterArg { cluster },
            kustomization,
        } => {
            let session = repo.open()?;
            let found = session.cluster(&cluster)?;
            let analysis = session.analysis(found);
            let (text, broken) =
                report::manifests::build(found, &analysis.order.sequence, kustomization.as_deref())
                    .map_err(|e| anyhow::anyhow!(e))?;
            print(&text)?;
            // A tier that does not build, or was not built, fails the command.
            for line in &broken {
                eprintln!("conformance build: {}", report::text_safe(line));
            }
            Ok(if broken.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Diff {
            repo,
            base,
            base_dir,
            clusters: ClusterFilter { clusters },
            format,
        } => {
            let session = repo.open()?;
            for wanted in &clusters {
                session.cluster(wanted)?;
            }
            let base = base
                .map(conformance::base::Base::Rev)
                .or(base_dir.map(conformance::base::Base::Dir))
                .expect("clap requires one");
            let base_model = session.base_model(&base)?;
            let changes = report::manifests::diff(&base_model, &session.model, &clusters);
            let text = match format {
                DiffFormat::Human => {
                    report::text_safe(&report::manifests::diff_human(&changes)).into_owned()
                }
                DiffFormat::Json => {
                    let mut t =
                        serde_json::to_string_pretty(&report::manifests::diff_json(&changes))?;
                    t.push('\n');
                    t
                }
                DiffFormat::Markdown => {
                    report::text_safe(&report::manifests::diff_markdown(&changes)).into_owned()
                }
            };
            print(&text)?;
            // A head tier that does not build fails the command: its objects
            // are unknown, so no diff can say nothing changed.
            Ok(if report::manifests::TierChanges::any_broken(&changes) {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Graph {
            repo,
            cluster: ClusterArg { cluster },
        } => {
            let session = repo.open()?;
            let found = session.cluster(&cluster)?;
            let mut text = TierGraph::of(found).canonical();
            text.push_str(&conformance::graph::notes(found));
            text.push_str(&session.analysis(found).never_ready_notes());
            print_text(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Crds {
            repo,
            cluster: ClusterArg { cluster },
            wide,
        } => {
            let session = repo.open()?;
            let found = session.cluster(&cluster)?;
            print_text(&report::crds::render_with(&session.analysis(found), wide))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Substitutions {
            repo,
            clusters: ClusterFilter { clusters },
        } => {
            let session = repo.open()?;
            let mut selected = Vec::new();
            for name in &clusters {
                selected.push(session.cluster(name)?);
            }
            if selected.is_empty() {
                selected = session.model.clusters.iter().collect();
            }
            print_text(&report::substitutions::render(&selected))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::L1Plan { repo, cluster } => {
            let session = repo.open()?;
            let name = cluster
                .or_else(|| session.config.l1.cluster.clone())
                .or_else(|| session.model.clusters.first().map(|c| c.name.clone()))
                .unwrap_or_default();
            let found = session.cluster(&name)?;
            let prediction = conformance::l1::predict::predict(
                found,
                &session.catalog,
                &session.index,
                &session.bootstrap,
            );
            let analysis = session.analysis(found);
            let plan = conformance::l1::plan(&analysis, &session.config.l1, &session.catalog);
            let image =
                conformance::l1::k3s_image(&session.config.l1, session.config.kubernetes_of(&name));
            print_text(&format!(
                "{}\nApply mode (L1_MODE=apply): the harness applies tiers itself\n{}",
                conformance::l1::predict::render(&prediction),
                conformance::l1::render(&plan, &image)
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Config {
            action: ConfigAction::Check { repo },
        } => {
            let session = repo.open()?;
            session.check_config()?;
            let config = &session.config;
            let exists = repo.repo.join(conformance::config::FILE_NAME).is_file();
            for m in config.l1.manifests.iter().filter(|m| m.sha256.is_none()) {
                eprintln!(
                    "{}:{}: warning: l1.manifests entry for {} has no sha256: L1 refuses it until it is pinned (`curl -fsSL {} | sha256sum`)",
                    conformance::config::FILE_NAME,
                    m.file.referenced.line(),
                    m.file.value,
                    m.url.value
                );
            }
            print(&if exists {
                format!(
                    "{}: ok ({} placement and {} field policies, {} waivers, {} clusters discovered)\n",
                    conformance::config::FILE_NAME,
                    config.policies.placement.len(),
                    config.policies.fields.len(),
                    config.waivers.len(),
                    session.model.clusters.len()
                )
            } else {
                format!(
                    "no {} in {}: every default applies\n",
                    conformance::config::FILE_NAME,
                    repo.repo.display()
                )
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Explain { rule } => {
            let Some(found) = rules::by_id(&rule) else {
                let known: Vec<&str> = rules::all().iter().map(|r| r.id().as_str()).collect();
                anyhow::bail!("unknown rule `{rule}`; rules: {}", known.join(", "));
            };
            let severity = match found.other_severities() {
                Some(other) => format!("{}; {other}", found.severity().as_str()),
                None => found.severity().as_str().to_string(),
            };
            print(&format!(
                "{} ({severity})\n\n{}\n\nExample: {}\n\n{}\n",
                found.id(),
                found.summary(),
                found.example(),
                wrap(found.explain(), 80)
            ))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a panic.
/// `--output FORMAT=PATH`.
fn parse_output(arg: &str) -> Result<(report::Format, PathBuf), String> {
    use clap::ValueEnum;
    let (format, path) = arg
        .split_once('=')
        .ok_or_else(|| format!("`{arg}`: expected FORMAT=PATH, e.g. sarif=conformance.sarif"))?;
    let format = report::Format::from_str(format, true).map_err(|_| {
        format!("`{format}`: not a report format (human, json, junit, sarif, github)")
    })?;
    if path.is_empty() {
        return Err(format!("`{arg}`: no path after `=`"));
    }
    Ok((format, PathBuf::from(path)))
}

/// Writes text meant for people to stdout, with what a terminal would obey
/// escaped ([`report::text_safe`]).
fn print_text(text: &str) -> anyhow::Result<()> {
    print(&report::text_safe(text))
}

fn print(text: &str) -> anyhow::Result<()> {
    conformance::progress::clear();
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split_whitespace() {
        if line_len > 0 && line_len + 1 + word.len() > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += word.len();
    }
    out
}
