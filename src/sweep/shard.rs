//! Sharded sweeps: `--shard I/N` runs whole tasks, task j (0-based, of the
//! sorted selection) going to shard j mod N + 1, and `merge` joins the
//! shards' results into the result an unsharded sweep would have written.
//!
//! `--shard` alone (or `--shard auto`) reads I and N from the environment of
//! the batch system running it ([`from_env`]):
//!
//! | source | index | count |
//! |---|---|---|
//! | any (a CI matrix, e.g. GitHub Actions `env: VAULTBENCH_SHARD_INDEX: ${{ matrix.shard }}`) | `VAULTBENCH_SHARD_INDEX`, from 1 | `VAULTBENCH_SHARD_COUNT` |
//! | Kubernetes Indexed Job | `JOB_COMPLETION_INDEX`, from 0 | `VAULTBENCH_SHARD_COUNT` (the Job's `completions`) |
//! | SLURM job array (`sbatch --array=0-3`, `1-7:2`) | (`SLURM_ARRAY_TASK_ID` - `SLURM_ARRAY_TASK_MIN`) / `SLURM_ARRAY_TASK_STEP` | `SLURM_ARRAY_TASK_COUNT` |
//!
//! Sources that are present must agree, or it is an error naming them; a
//! shard given on the command line wins over the environment.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{Result, bail};

use crate::format::result::{ResultFile, RunId};
use crate::report::aggregate;

/// `I/N`: shard I (from 1) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{s}`: write I/N with 1 <= I <= N, e.g. 1/2");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What `--shard` was given: a shard, or `auto` (read the environment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Given(Shard),
    FromEnv,
}

impl FromStr for ShardArg {
    type Err = String;
    fn from_str(s: &str) -> Result<ShardArg, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(ShardArg::FromEnv);
        }
        s.parse::<Shard>().map(ShardArg::Given).map_err(|e| format!("{e}, or `auto` to read it from the environment"))
    }
}

/// A whole number from the environment, or an error naming the variable.
fn env_number(var: &impl Fn(&str) -> Option<String>, name: &str) -> Result<Option<i64>> {
    match var(name) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{name} is `{v}`: the shard's environment needs whole numbers")),
    }
}

/// The shard the batch system's environment names (see the module docs),
/// with a description of where it came from; `None` when none is set.
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<(Shard, String)>> {
    let num = |name: &str| env_number(&var, name);
    let shard = |index0: i64, count: i64, from: String| -> Result<(Shard, String)> {
        if count < 1 || index0 < 0 || index0 >= count {
            bail!("{from} gives shard {} of {count}, which does not exist (shards are 1 to {count})", index0 + 1);
        }
        Ok((Shard { index: index0 as usize + 1, count: count as usize }, from))
    };
    let count = num("VAULTBENCH_SHARD_COUNT")?;
    let mut found = Vec::new();
    if let Some(index) = num("VAULTBENCH_SHARD_INDEX")? {
        let Some(count) = count else { bail!("VAULTBENCH_SHARD_INDEX is set but not VAULTBENCH_SHARD_COUNT") };
        found.push(shard(index - 1, count, format!("VAULTBENCH_SHARD_INDEX={index}, VAULTBENCH_SHARD_COUNT={count}"))?);
    }
    if let Some(index) = num("JOB_COMPLETION_INDEX")? {
        let Some(count) = count else {
            bail!(
                "JOB_COMPLETION_INDEX={index} (a Kubernetes Indexed Job) is set but not the shard count: \
                 set VAULTBENCH_SHARD_COUNT to the Job's completions"
            )
        };
        found.push(shard(
            index,
            count,
            format!("JOB_COMPLETION_INDEX={index} (Kubernetes Indexed Job), VAULTBENCH_SHARD_COUNT={count}"),
        )?);
    }
    if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
        let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
        let max = num("SLURM_ARRAY_TASK_MAX")?;
        let task_count = num("SLURM_ARRAY_TASK_COUNT")?;
        let from = format!("SLURM_ARRAY_TASK_ID={id} (SLURM job array)");
        if step < 1 || id < min || (id - min) % step != 0 {
            bail!("{from}: not an index of an array from SLURM_ARRAY_TASK_MIN={min} in steps of {step}");
        }
        let regular = max.map(|max| (max - min) / step + 1);
        let count = match (task_count, regular) {
            (Some(c), Some(r)) if c != r => bail!(
                "{from}: the array's indexes are not a range (SLURM_ARRAY_TASK_COUNT={c}, but {min} to {} in steps \
                 of {step} makes {r}): submit it as --array=0-{} or pass --shard I/N",
                max.unwrap_or(min),
                c - 1
            ),
            (Some(c), _) => c,
            (None, Some(r)) => r,
            (None, None) => bail!("{from}: neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX is set"),
        };
        found.push(shard((id - min) / step, count, from)?);
    }
    let Some((first, first_from)) = found.first().cloned() else { return Ok(None) };
    if let Some((other, other_from)) = found.iter().find(|(s, _)| *s != first) {
        bail!("the environment names two different shards: {first} from {first_from}, and {other} from {other_from}");
    }
    Ok(Some((first, first_from)))
}

impl Shard {
    /// The items of this shard, keeping their order.
    pub fn select<T>(&self, items: Vec<T>) -> Vec<T> {
        items.into_iter().enumerate().filter(|(j, _)| j % self.count == self.index - 1).map(|(_, t)| t).collect()
    }
}

/// Join shard results into one. Every shard 1..N must be there exactly once,
/// from the same sweep (provider, model, commit, task filter, k) and the same
/// task list (each shard holds exactly the tasks its position gives it).
pub fn merge(parts: &[(PathBuf, ResultFile)]) -> Result<ResultFile> {
    let Some((first_path, first)) = parts.first() else { bail!("give the shard result files to merge") };
    let shard_of = |path: &PathBuf, r: &ResultFile| -> Result<Shard> {
        match &r.shard {
            None => bail!(
                "{}: not a shard result (it has no `shard` field); only `run --shard I/N` results merge",
                path.display()
            ),
            Some(s) => s.parse().map_err(|e: String| anyhow::anyhow!("{}: {e}", path.display())),
        }
    };
    let count = shard_of(first_path, first)?.count;
    let k = first.tasks.first().map(|t| t.n_runs);
    // Each shard's file and run id, at its position.
    let mut slots: Vec<Option<(&PathBuf, &RunId)>> = vec![None; count];
    for (path, r) in parts {
        let shard = shard_of(path, r)?;
        if shard.count != count {
            bail!(
                "{} is shard {shard} but {} is shard of {count}: all parts must split the sweep the same way",
                path.display(),
                first_path.display()
            );
        }
        if let Some((other, _)) = slots[shard.index - 1] {
            bail!("shard {shard} given twice: {} and {}", other.display(), path.display());
        }
        slots[shard.index - 1] = Some((path, &r.run_id));
        for (field, a, b) in [
            ("provider", &first.provider, &r.provider),
            ("model", &first.model, &r.model),
            ("git_sha", &first.git_sha, &r.git_sha),
        ] {
            if a != b {
                bail!(
                    "{field} differs: {} has `{a}`, {} has `{b}`; only shards of one sweep merge",
                    first_path.display(),
                    path.display()
                );
            }
        }
        if r.task_filter != first.task_filter {
            bail!("task_filter differs between {} and {}", first_path.display(), path.display());
        }
        if r.interrupted {
            bail!(
                "{} was interrupted: resume it (`vaultbench run --resume {}`) before merging",
                path.display(),
                r.run_id
            );
        }
        for t in &r.tasks {
            if Some(t.n_runs) != k {
                bail!(
                    "{}: task `{}` has {} runs but the sweep's k is {}; shards must use the same --repeat",
                    path.display(),
                    t.id,
                    t.n_runs,
                    k.unwrap_or(0)
                );
            }
        }
    }
    let missing: Vec<String> = (1..=count).filter(|i| slots[i - 1].is_none()).map(|i| format!("{i}/{count}")).collect();
    if !missing.is_empty() {
        bail!(
            "missing shard{} {}: merge needs every shard",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        );
    }

    let mut tasks: Vec<_> = parts.iter().flat_map(|(_, r)| r.tasks.iter().cloned()).collect();
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    for pair in tasks.windows(2) {
        if pair[0].id == pair[1].id {
            bail!("task `{}` is in more than one shard: the parts overlap", pair[0].id);
        }
    }
    // Each shard must hold exactly the tasks its position gives it, which
    // also catches shards of different suites or task selections.
    for (path, r) in parts {
        let shard = shard_of(path, r)?;
        let expected: Vec<&str> = shard.select(tasks.iter().map(|t| t.id.as_str()).collect());
        let mut actual: Vec<&str> = r.tasks.iter().map(|t| t.id.as_str()).collect();
        actual.sort_unstable();
        if expected != actual {
            bail!(
                "{} (shard {shard}) does not hold the tasks shard {shard} of this task list would: the parts come from different suites or selections",
                path.display()
            );
        }
    }
    let run_id = parts.iter().map(|(_, r)| r.run_id.clone()).min().expect("at least one part");
    // Each shard's run id, shard 1/N first: its transcripts carry it.
    let shard_run_ids = slots.iter().flatten().map(|(_, id)| (*id).clone()).collect();
    let merged = ResultFile {
        run_id,
        git_sha: first.git_sha.clone(),
        model: first.model.clone(),
        provider: first.provider.clone(),
        interrupted: false,
        shard: None,
        task_filter: first.task_filter.clone(),
        offline_judge: first.offline_judge,
        shard_run_ids,
        aggregate: aggregate::aggregate(&tasks),
        tasks,
    };
    Ok(aggregate::rederive(&merged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Tier;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    fn shard_of(pairs: &'static [(&'static str, &'static str)]) -> Result<Option<String>> {
        from_env(env(pairs)).map(|s| s.map(|(s, _)| s.to_string()))
    }

    #[test]
    fn the_shard_comes_from_the_batch_systems_environment() {
        assert_eq!(shard_of(&[]).unwrap(), None);
        let gha = &[("VAULTBENCH_SHARD_INDEX", "2"), ("VAULTBENCH_SHARD_COUNT", "4")];
        assert_eq!(shard_of(gha).unwrap().as_deref(), Some("2/4"));
        let k8s = &[("JOB_COMPLETION_INDEX", "0"), ("VAULTBENCH_SHARD_COUNT", "3")];
        assert_eq!(shard_of(k8s).unwrap().as_deref(), Some("1/3"));
        let slurm = &[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(shard_of(slurm).unwrap().as_deref(), Some("3/4"));
        let slurm0 = &[("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_COUNT", "2")];
        assert_eq!(shard_of(slurm0).unwrap().as_deref(), Some("1/2"));
        // Two sources that agree are fine.
        let both = &[("JOB_COMPLETION_INDEX", "1"), ("VAULTBENCH_SHARD_INDEX", "2"), ("VAULTBENCH_SHARD_COUNT", "2")];
        assert_eq!(shard_of(both).unwrap().as_deref(), Some("2/2"));
    }

    #[test]
    fn a_bad_or_conflicting_environment_is_an_error_naming_it() {
        let err = |pairs: &'static [(&'static str, &'static str)]| shard_of(pairs).unwrap_err().to_string();
        let e = err(&[("JOB_COMPLETION_INDEX", "1"), ("VAULTBENCH_SHARD_INDEX", "1"), ("VAULTBENCH_SHARD_COUNT", "2")]);
        assert!(e.contains("two different shards") && e.contains("JOB_COMPLETION_INDEX=1"), "{e}");
        assert!(err(&[("JOB_COMPLETION_INDEX", "1")]).contains("set VAULTBENCH_SHARD_COUNT"));
        assert!(
            err(&[("VAULTBENCH_SHARD_INDEX", "x"), ("VAULTBENCH_SHARD_COUNT", "2")])
                .contains("VAULTBENCH_SHARD_INDEX is `x`")
        );
        assert!(err(&[("VAULTBENCH_SHARD_INDEX", "3"), ("VAULTBENCH_SHARD_COUNT", "2")]).contains("does not exist"));
        assert!(err(&[("VAULTBENCH_SHARD_INDEX", "0"), ("VAULTBENCH_SHARD_COUNT", "2")]).contains("does not exist"));
        let irregular = &[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert!(err(irregular).contains("not a range"), "{}", err(irregular));
        assert!(err(&[("SLURM_ARRAY_TASK_ID", "3")]).contains("SLURM_ARRAY_TASK_COUNT"));
        assert_eq!("auto".parse::<ShardArg>(), Ok(ShardArg::FromEnv));
        assert!("0/2".parse::<ShardArg>().unwrap_err().contains("`auto`"));
    }

    #[test]
    fn parse_and_select() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s.to_string(), "2/3");
        assert_eq!(s.select(vec!['a', 'b', 'c', 'd', 'e']), ['b', 'e']);
        for bad in ["0/2", "3/2", "1", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    fn part(shard: &str, ids: &[&str]) -> (PathBuf, ResultFile) {
        let tasks: Vec<_> = ids
            .iter()
            .map(|id| {
                let run = crate::report::aggregate::tests::run(true, true, 2, 0.0, None);
                aggregate::task_result(id.to_string(), Some(Tier::T1), None, vec![run.clone(), run])
            })
            .collect();
        let r = ResultFile {
            run_id: RunId(format!("2026-11-22T10:00:0{}.000Z", &shard[..1])),
            git_sha: "abc1234".into(),
            model: "m".into(),
            provider: "reference".into(),
            interrupted: false,
            shard: Some(shard.into()),
            task_filter: None,
            offline_judge: false,
            shard_run_ids: Vec::new(),
            aggregate: aggregate::aggregate(&tasks),
            tasks,
        };
        (PathBuf::from(format!("s{}.json", &shard[..1])), r)
    }

    #[test]
    fn merge_joins_and_refuses_bad_parts() {
        let merged = merge(&[part("2/2", &["b", "d"]), part("1/2", &["a", "c", "e"])]).unwrap();
        assert_eq!(merged.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d", "e"]);
        assert_eq!((merged.shard.clone(), merged.aggregate.total_tasks), (None, 5));
        assert_eq!(merged.run_id.0, "2026-11-22T10:00:01.000Z");
        // The transcripts of each task carry the run id of the shard that ran it.
        let ids: Vec<&str> = merged.shard_run_ids.iter().map(|id| id.0.as_str()).collect();
        assert_eq!(ids, ["2026-11-22T10:00:01.000Z", "2026-11-22T10:00:02.000Z"]);
        let of = |task: &str| merged.run_id_of(task).map(|id| id.0.clone());
        assert_eq!(of("a").as_deref(), Some("2026-11-22T10:00:01.000Z"));
        assert_eq!(of("d").as_deref(), Some("2026-11-22T10:00:02.000Z"));
        assert_eq!(of("e").as_deref(), Some("2026-11-22T10:00:01.000Z"));
        assert_eq!(of("z"), None);
        let (_, single) = part("1/2", &["a"]);
        assert_eq!(single.run_id_of("a"), Some(&single.run_id), "a result of one process: its own id");

        let err = |parts: &[(PathBuf, ResultFile)]| merge(parts).unwrap_err().to_string();
        assert!(err(&[part("1/2", &["a", "c"])]).contains("missing shard 2/2"));
        assert!(err(&[part("1/2", &["a"]), part("1/2", &["b"])]).contains("given twice"));
        assert!(err(&[part("1/2", &["a", "c"]), part("2/2", &["c"])]).contains("overlap"));
        assert!(err(&[part("1/2", &["a", "b"]), part("2/2", &["c"])]).contains("different suites"));
        let (p, mut other) = part("2/2", &["b"]);
        other.model = "other".into();
        assert!(err(&[part("1/2", &["a"]), (p.clone(), other)]).contains("model differs"));
        let (_, mut whole) = part("1/2", &["a"]);
        whole.shard = None;
        assert!(err(&[(p, whole)]).contains("not a shard result"));
    }
}
