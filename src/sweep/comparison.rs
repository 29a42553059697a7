//! The side-by-side report of a `--models` sweep: per task, solved/k for
//! each model (`~` marks a flaky task), then summary rows with 95%
//! intervals, the solve^k curve over k, and each model compared with the
//! first on their common tasks (paired bootstrap, Fisher's exact test).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::format::result::ResultFile;
use crate::jsnum;
use crate::stats::{self, Paired, Settings, Summary};

fn pct(x: f64) -> String {
    format!("{}%", jsnum::to_fixed(x, 1))
}

/// Escape a table cell: model output never reaches here, but ids could hold `|`.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Markdown comparing `results` (one per model, same provider and suite).
pub fn render(results: &[(&str, &ResultFile)]) -> String {
    let mut s = String::new();
    let provider = results.first().map_or("", |(_, r)| r.provider.as_str());
    let _ = writeln!(s, "# Model comparison ({provider})\n");
    let _ = writeln!(s, "Each cell is solved/k (runs that met the whole rubric); `~` marks a flaky task.\n");
    let mut header = String::from("| Task | Tier |");
    let mut rule = String::from("|---|---|");
    for (_, r) in results {
        let _ = write!(header, " {} |", cell(&r.model));
        rule.push_str("---|");
    }
    let _ = writeln!(s, "{header}\n{rule}");
    // Every task of any model, in id order, with its tier.
    let mut tasks: BTreeMap<&str, &str> = BTreeMap::new();
    for (_, r) in results {
        for t in &r.tasks {
            tasks.entry(&t.id).or_insert_with(|| t.difficulty.map_or("-", |d| d.as_str()));
        }
    }
    for (id, tier) in &tasks {
        let mut row = format!("| {} | {tier} |", cell(id));
        for (_, r) in results {
            match r.tasks.iter().find(|t| t.id == *id) {
                Some(t) => {
                    let _ = write!(row, " {}/{}{} |", t.solved_count, t.n_runs, if t.flaky { " ~" } else { "" });
                }
                None => row.push_str(" — |"),
            }
        }
        let _ = writeln!(s, "{row}");
    }
    type Row = (&'static str, fn(&ResultFile) -> String);
    let rows: [Row; 8] = [
        ("**pass^k**", |r| pct(r.aggregate.pass_k_rate)),
        ("**solve^k**", |r| pct(r.aggregate.solve_k_rate)),
        ("mean solve rate", |r| pct(r.aggregate.mean_solve_rate)),
        ("flaky tasks", |r| r.aggregate.flaky_task_count.to_string()),
        ("mean turns", |r| jsnum::to_string(r.aggregate.mean_turns)),
        ("total cost", |r| format!("${}", jsnum::to_fixed(r.aggregate.total_cost_usd, 4))),
        ("loop fires", |r| r.aggregate.total_loop_fires.to_string()),
        ("run", |r| format!("`{}`", r.run_id)),
    ];
    for (label, f) in rows {
        let mut row = format!("| {label} | |");
        for (_, r) in results {
            let _ = write!(row, " {} |", f(r));
        }
        let _ = writeln!(s, "{row}");
    }
    let summaries: Vec<Option<Summary>> =
        results.iter().map(|(_, r)| Summary::of(&stats::counts(r), &Settings::default())).collect();
    let interval = |f: fn(&Summary) -> String| -> String {
        summaries.iter().map(|st| format!(" {} |", st.as_ref().map_or_else(|| "—".into(), f))).collect()
    };
    let _ = writeln!(s, "| pass^k 95% interval | |{}", interval(|st| stats::bounds(&st.pass_k)));
    let _ = writeln!(s, "| solve^k 95% interval | |{}", interval(|st| stats::bounds(&st.solve_k)));
    let _ = writeln!(s, "| mean solve rate 95% interval | |{}", interval(|st| stats::bounds(&st.mean_solve_rate)));
    let longest = summaries.iter().flatten().map(|st| st.curve.len()).max().unwrap_or(0);
    for j in 0..longest {
        let mut row = String::new();
        let mut label = String::new();
        for st in &summaries {
            match st.as_ref().and_then(|st| st.curve.get(j)) {
                Some(p) => {
                    label = format!("solve^{}", p.k);
                    let _ = write!(row, " {}% |", stats::fixed1(p.solve.estimate));
                }
                None => row.push_str(" — |"),
            }
        }
        let _ = writeln!(s, "| {label} | |{row}");
    }
    let _ = writeln!(
        s,
        "\nIntervals: 95%, bootstrap over tasks (a task's runs stay together), fixed seed. solve^j for j below k is \
         the unbiased estimate (per task C(c,j)/C(n,j), averaged): the chance that j runs of a task all solve it."
    );
    write_paired(&mut s, results);
    let _ = writeln!(s, "\nResult files:\n");
    for (path, r) in results {
        let _ = writeln!(s, "- {}: `{path}`", r.model);
    }
    s
}

/// Each model after the first against the first, on their common tasks.
fn write_paired(s: &mut String, results: &[(&str, &ResultFile)]) {
    let Some(((_, first), rest)) = results.split_first() else { return };
    if rest.is_empty() {
        return;
    }
    let settings = Settings::default();
    let base = stats::counts(first);
    let _ = writeln!(s, "\n## Against {}\n", cell(&first.model));
    let _ = writeln!(
        s,
        "Paired on the tasks both ran: the change (this model − {}) with its 95% bootstrap interval and p-value; \
         tasks whose solved counts differ significantly (Fisher's exact test, two-sided, Benjamini–Hochberg \
         corrected at 0.05).\n",
        cell(&first.model)
    );
    let _ = writeln!(s, "| Model | Common tasks | k | solve^k change | mean solve rate change | Tasks that differ |");
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for (_, r) in rest {
        let Some(p) = Paired::of(&base, &stats::counts(r), &settings) else {
            let _ = writeln!(s, "| {} | 0 | — | — | — | — |", cell(&r.model));
            continue;
        };
        let change = |d: &stats::paired::Difference| {
            if p.common_tasks < stats::gate::MIN_TASKS {
                // One or two tasks resample to themselves: no interval worth printing.
                return format!("{}pp (too few tasks for an interval)", stats::signed1(d.change.estimate));
            }
            format!(
                "{}pp {} p {}",
                stats::signed1(d.change.estimate),
                stats::bounds(&d.change),
                stats::format_p(d.p_value)
            )
        };
        let differ: Vec<String> = p
            .tasks
            .iter()
            .filter(|t| t.solved.significant_difference(stats::DEFAULT_ALPHA))
            .map(|t| format!("{} {} → {}", cell(&t.id), t.solved.before, t.solved.after))
            .collect();
        let k = if p.different_k() {
            format!("{} (common k of {} and {})", p.k, p.k_before, p.k_after)
        } else {
            p.k.to_string()
        };
        let _ = writeln!(
            s,
            "| {} | {} | {k} | {} | {} | {} |",
            cell(&r.model),
            p.common_tasks,
            change(&p.solve_k),
            change(&p.mean_solve_rate),
            if differ.is_empty() { "none".to_string() } else { differ.join("; ") }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Tier;
    use crate::format::result::RunId;
    use crate::report::aggregate::{self, tests::run};

    fn result(model: &str, tasks: &[(&str, &[bool])]) -> ResultFile {
        let tasks: Vec<_> = tasks
            .iter()
            .map(|(id, solved)| {
                let runs = solved.iter().map(|&s| run(true, s, 2, 0.0, None)).collect();
                aggregate::task_result(id.to_string(), Some(Tier::T2), None, runs)
            })
            .collect();
        ResultFile {
            run_id: RunId("2026-11-22T10:00:00.000Z".into()),
            git_sha: "abc".into(),
            model: model.into(),
            provider: "ollama".into(),
            interrupted: false,
            shard: None,
            task_filter: None,
            offline_judge: false,
            shard_run_ids: Vec::new(),
            aggregate: aggregate::aggregate(&tasks),
            tasks,
        }
    }

    #[test]
    fn per_task_cells_flaky_marks_and_summary_rows() {
        let a = result("gemma", &[("alpha", &[true, true]), ("beta", &[true, false])]);
        let b = result("qwen", &[("alpha", &[false, false])]);
        let md = render(&[("a.json", &a), ("b.json", &b)]);
        assert!(md.contains("| Task | Tier | gemma | qwen |"), "{md}");
        assert!(md.contains("| alpha | T2 | 2/2 | 0/2 |"), "{md}");
        assert!(md.contains("| beta | T2 | 1/2 ~ | — |"), "{md}");
        assert!(md.contains("| **solve^k** | | 50.0% | 0.0% |"), "{md}");
        assert!(md.contains("- qwen: `b.json`"), "{md}");
        assert!(md.contains("| solve^k 95% interval | |"), "{md}");
        assert!(md.contains("| solve^1 | | 75.0% | 0.0% |"), "{md}");
        assert!(md.contains("| solve^2 | | 50.0% | 0.0% |"), "{md}");
        assert!(md.contains("## Against gemma"), "{md}");
        assert!(md.contains("| qwen | 1 | 2 | -100.0pp (too few tasks for an interval) |"), "{md}");
    }

    #[test]
    fn models_with_different_k_compare_at_the_common_k() {
        let a = result("gemma", &[("alpha", &[true, true, true]), ("beta", &[true, true, false])]);
        let b = result("qwen", &[("alpha", &[true, true]), ("beta", &[false, false])]);
        let md = render(&[("a.json", &a), ("b.json", &b)]);
        assert!(md.contains("| qwen | 2 | 2 (common k of 3 and 2) |"), "{md}");
    }
}
