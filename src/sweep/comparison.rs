//! The side-by-side report of a `--models` sweep: per task, solved/k for
//! each model (`~` marks a flaky task), then summary rows.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::format::result::ResultFile;
use crate::jsnum;

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
    let _ = writeln!(s, "\nResult files:\n");
    for (path, r) in results {
        let _ = writeln!(s, "- {}: `{path}`", r.model);
    }
    s
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
    }
}
