"""Learning from history: does ``ToolUsageLearner`` make semantic tool selection offer the
right tool more often?

A synthetic but realistic setting: 60 tools (20 that the questions need, 40 others) and
questions worded the way people ask them ("how did churn move in Q3?"), which often share
no word with the right tool's description ("Run a SQL statement against the analytics
warehouse"). Each of the 20 tasks has 12 questions, made from three templates and
random fillers (metric, dataset, period ...; shared by all tasks, so they mislead too).
Some questions train the learner (a finished turn in which the right tool ran ok; some
turns also ran ``list_variables`` ok or a wrong tool that failed, as real turns do), the
others are asked. A hit: the right tool is among the tools the harness offers
(``AgentHarness.offered_tools``, semantic selection, ``max_tools_per_turn`` 8; the others
would wait behind ``find_tools``, which this measure does not count).

Two splits: "like trained ones" asks every other question (each template is on both
sides); "unlike any trained" asks the questions of each task's third template, which the
learner never saw. Prints the hit rate without and with the learner, how many asked
questions it turned into hits ("better") and into misses ("worse"), for several training
sizes and seeds, and the time selection takes. Asserts nothing. The question set is made
so that wording and tool descriptions differ, which is where selection needs the help:
the absolute "without" figures say little about real tool sets, the gap is the point.

    python benchmarks/tool_learning.py [--max-tools 8] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from jupyter_brain.agent.decisions import ToolUsageLearner
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.results import ToolCallRecord, TurnResult
from jupyter_brain.agent.tools import AgentToolRegistry, ToolSpec, tool
from jupyter_brain.providers.scripted import ScriptedProvider

# task tool -> (its description, question templates)
TASKS: dict[str, tuple[str, list[str]]] = {
    "query_warehouse": ("Run a SQL statement against the analytics warehouse and return rows",
                        ["how did {metric} move in {period}?", "what was our {metric} during {period}",
                         "pull the {metric} numbers for {period}"]),
    "plot_line_chart": ("Render a line chart of numeric columns against an index",
                        ["show me the trend of {metric} over {period}", "visualize how {metric} evolved in {period}",
                         "draw {metric} across {period} so I can see the trend"]),
    "describe_dataframe": ("Summary statistics (count, mean, std, quartiles) of a DataFrame's columns",
                           ["give me an overview of the {dataset} data", "what does {dataset} look like numerically?",
                            "quick profile of {dataset} please"]),
    "find_missing_values": ("Count null and NaN entries per column",
                            ["are there gaps in {dataset}?", "which fields of {dataset} are empty or incomplete",
                             "how complete is {dataset}"]),
    "detect_outliers": ("Flag rows whose values fall outside the interquartile fences",
                        ["anything weird or unusual in the {metric} of {dataset}?", "spot anomalies in {metric}",
                         "are there suspicious spikes in {metric} during {period}"]),
    "fit_regression": ("Fit an ordinary least squares linear model and report coefficients",
                       ["does {feature} explain {metric}?", "how strongly does {feature} drive {metric}",
                        "quantify the effect of {feature} on {metric}"]),
    "forecast_series": ("Project a time series forward with exponential smoothing",
                        ["what will {metric} be next {horizon}?", "predict {metric} for the coming {horizon}",
                         "where is {metric} heading over the next {horizon}"]),
    "join_tables": ("Merge two DataFrames on key columns",
                    ["combine {dataset} with {dataset2} by customer", "bring the {dataset2} info into {dataset}",
                     "match each row of {dataset} to its {dataset2} record"]),
    "pivot_table": ("Reshape a DataFrame into a pivot table with an aggregation",
                    ["break {metric} down by {dimension}", "cross-tab {metric} per {dimension} and {period}",
                     "split {metric} by {dimension} side by side"]),
    "read_parquet": ("Load a Parquet file from disk into a DataFrame",
                     ["open the {dataset} export from the lake folder", "get the {dataset} dump into memory",
                      "load last night's {dataset} extract"]),
    "send_slack_message": ("Post a message to a Slack channel",
                           ["let the team know the {metric} report is ready", "ping #analytics about {dataset}",
                            "tell everyone in the channel that {metric} for {period} is done"]),
    "git_diff": ("Show the uncommitted changes of the repository",
                 ["what did I change in {file} today", "which edits to {file} have I not saved to version control yet",
                  "review my pending modifications of {file} before I push"]),
    "install_package": ("Install a Python distribution with pip",
                        ["I need {lib} available in this kernel", "set up {lib} for me",
                         "{lib} is missing, can you add it"]),
    "profile_memory": ("Measure the RAM used by kernel objects",
                       ["why is my notebook with {dataset} so heavy", "which variables eat the most space since {dataset} loaded",
                        "the kernel keeps crashing after reading {dataset}, what is so big"]),
    "translate_text": ("Translate text between natural languages",
                       ["what does this {lang} sentence say in English", "render the {lang} feedback in English",
                        "I can't read {lang}, help me with these reviews"]),
    "geocode_address": ("Convert street addresses to latitude and longitude",
                        ["where on the map are our {dataset} stores", "get coordinates for the {dataset} locations",
                         "put the {dataset} shops on a map"]),
    "compute_correlation": ("Pairwise Pearson correlation matrix of numeric columns",
                            ["which fields of {dataset} move together", "are {feature} and {metric} related",
                             "is {metric} linked to {feature}"]),
    "ab_test_significance": ("Two-sample t-test and p-value for an experiment",
                             ["did variant B beat A on {metric}", "is the uplift in {metric} from the test real",
                              "was the new checkout better for {metric} or just luck"]),
    "schedule_job": ("Register a recurring cron task",
                     ["run this {dataset} refresh every {when}", "make the {metric} report rebuild each {when}",
                      "automate the {dataset} update on {when}s"]),
    "export_excel": ("Write a DataFrame to an xlsx workbook",
                     ["give me {dataset} as a spreadsheet for finance", "finance wants {metric} in a file they can open",
                      "save {dataset} so accounting can open it"]),
}

OTHER_TOOLS: dict[str, str] = {
    "list_variables": "List the variables of the user's namespace",
    "render_bar_chart": "Render a bar chart of categories",
    "plot_histogram": "Plot the distribution of one numeric column",
    "plot_scatter": "Scatter plot of two columns",
    "query_mongodb": "Find documents in a MongoDB collection",
    "send_email": "Send an email message to recipients",
    "read_csv": "Read a CSV file into a DataFrame",
    "read_json": "Parse a JSON file",
    "write_csv": "Write a DataFrame to a CSV file",
    "list_files": "List the files of a folder",
    "delete_file": "Delete a file from disk",
    "http_get": "Fetch a URL over HTTP",
    "web_search": "Search the web for pages",
    "summarize_text": "Summarize a long text",
    "sentiment_score": "Score the sentiment of reviews and feedback",
    "cluster_kmeans": "Group rows into k clusters",
    "train_classifier": "Train a gradient boosted classifier",
    "evaluate_model": "Accuracy, precision and recall of a model",
    "tokenize_text": "Split text into tokens",
    "resize_image": "Resize an image",
    "ocr_image": "Extract text from a scanned image",
    "zip_folder": "Compress a folder into a zip archive",
    "hash_file": "SHA-256 of a file",
    "run_shell": "Run a shell command",
    "docker_ps": "List running containers",
    "kube_logs": "Tail the logs of a Kubernetes pod",
    "calendar_event": "Create a calendar event",
    "weather_lookup": "Current weather for a city",
    "currency_convert": "Convert amounts between currencies at a date",
    "unit_convert": "Convert between units of measure",
    "date_diff": "Days between two dates in a period",
    "regex_extract": "Extract matches of a regular expression",
    "spell_check": "Check the spelling of a text",
    "markdown_to_html": "Convert Markdown to HTML",
    "sample_rows": "Random sample of the rows of a dataset",
    "drop_duplicates": "Remove duplicate rows from a table",
    "rename_columns": "Rename the columns of a DataFrame",
    "sort_values": "Sort a DataFrame by the values of columns",
    "value_counts": "Count the occurrences of each value in a column",
    "load_excel": "Load the sheets of an Excel workbook",
}

FILLERS: dict[str, list[str]] = {
    "metric": ["revenue", "churn", "signups", "conversion", "retention", "basket size", "refunds"],
    "period": ["Q3", "last quarter", "March", "2023", "the holiday season"],
    "dataset": ["orders", "customers", "sessions", "invoices", "tickets", "suppliers"],
    "dataset2": ["payments", "accounts", "campaigns", "shipments"],
    "feature": ["price", "discount", "ad spend", "weather", "page speed"],
    "horizon": ["month", "quarter", "week"],
    "dimension": ["region", "channel", "product line", "store"],
    "lib": ["polars", "xgboost", "statsmodels", "duckdb"],
    "lang": ["German", "Spanish", "Japanese", "Portuguese"],
    "when": ["morning", "Monday", "night"],
    "file": ["etl.py", "model.py", "the loader", "utils.py", "the report notebook"],
}


def questions(rng: random.Random, per_task: int) -> dict[str, list[tuple[int, str]]]:
    """``per_task`` distinct (template number, question) pairs per task tool, the
    templates taken in turn and filled at random."""
    out: dict[str, list[tuple[int, str]]] = {}
    for name, (_, templates) in TASKS.items():
        made: list[tuple[int, str]] = []
        for _ in range(10_000):
            if len(made) == per_task:
                break
            k = len(made) % len(templates)
            q = templates[k].format(**{key: rng.choice(v) for key, v in FILLERS.items()})
            if q not in {m[1] for m in made}:
                made.append((k, q))
        out[name] = made
    return out


def make_tool(name: str, description: str) -> ToolSpec:
    def fn(query: str = "") -> str:
        return "ok"

    fn.__name__ = name
    fn.__doc__ = description
    return tool(fn)


def harness(learner: ToolUsageLearner | None, max_tools: int, rng: random.Random) -> AgentHarness:
    specs = [make_tool(n, d) for n, (d, _) in TASKS.items()] + [make_tool(n, d) for n, d in OTHER_TOOLS.items()]
    rng.shuffle(specs)  # the registry's order breaks ties: no help from where a tool sits
    return AgentHarness(ScriptedProvider([]), AgentToolRegistry(specs), None, autonomous_research_learner=learner,
                        enable_semantic_selection=True, max_tools_per_turn=max_tools)


def finished_turn(question: str, right: str, rng: random.Random) -> TurnResult:
    """A turn as the harness returns it: the right tool ran ok; some noise besides."""
    calls = [ToolCallRecord(call_id="c1", name=right, status="ok")]
    if rng.random() < 0.3:
        calls.insert(0, ToolCallRecord(call_id="c0", name="list_variables", status="ok"))
    if rng.random() < 0.2:
        wrong = rng.choice(sorted(OTHER_TOOLS))
        calls.insert(0, ToolCallRecord(call_id="cw", name=wrong, status="error"))
    return TurnResult(session_id="bench", turn_id=f"t{rng.random():.6f}", status="completed", text="",
                      new_messages=[{"role": "user", "content": question}], tool_calls=calls)


def hit_rate(offer: Callable[[str], list[dict[str, Any]]], asked: list[tuple[str, str]]) -> tuple[float, set[int]]:
    hits = {i for i, (q, right) in enumerate(asked) if right in {s["name"] for s in offer(q)}}
    return len(hits) / len(asked), hits


def run(max_tools: int, seed: int, train_share: float, per_task: int, *, new_wording: bool) -> dict[str, Any]:
    """Same wording: every other question of a task is asked, the learner trains on
    ``train_share`` of the task's questions from the rest. New wording: the questions of a
    task's last template are asked, the learner trains on those of its other templates."""
    rng = random.Random(seed)
    train: list[tuple[str, str]] = []
    test: list[tuple[str, str]] = []
    for t, made in questions(rng, per_task).items():
        if new_wording:
            last = len(TASKS[t][1]) - 1
            pool = [q for k, q in made if k != last]
            test += [(q, t) for k, q in made if k == last]
        else:
            pool = [q for _, q in made[0::2]]
            test += [(q, t) for _, q in made[1::2]]
        train += [(q, t) for q in pool[: round(per_task * train_share)]]
    learner = ToolUsageLearner()
    for q, t in train:
        learner.observe(finished_turn(q, t, rng))
    plain = harness(None, max_tools, random.Random(seed))
    learned = harness(learner, max_tools, random.Random(seed))
    without, hits_without = hit_rate(lambda q: plain.offered_tools([], q), test)
    with_, hits_with = hit_rate(lambda q: learned.offered_tools([], q), test)
    return {"train": len(train), "test": len(test), "without": without, "with": with_,
            "worse": len(hits_without - hits_with), "better": len(hits_with - hits_without),
            "plain": plain, "learned": learned, "asked": [q for q, _ in test]}


def timing(h: AgentHarness, asked: list[str]) -> float:
    times = []
    for q in asked:
        t0 = time.perf_counter()
        h.offered_tools([], q)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-tools", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--per-task", type=int, default=12)
    args = parser.parse_args()
    n_tools = len(TASKS) + len(OTHER_TOOLS) + 1  # + read_artifact, which every harness has
    print(f"{n_tools} tools ({len(TASKS)} needed by the questions), max_tools_per_turn {args.max_tools}, "
          f"{args.per_task} questions per task, seed {args.seed}")
    print(f"{'asked questions worded':<24}{'learner trained on':<22}{'asked':>5}  {'hit rate without':>16}  "
          f"{'with learner':>12}  {'better':>6}  {'worse':>5}")
    main_run = None
    for new_wording, shares in ((False, (0.1, 0.25, 0.5)), (True, (0.25, 0.5))):
        for share in shares:
            r = run(args.max_tools, args.seed, share, args.per_task, new_wording=new_wording)
            wording = "unlike any trained" if new_wording else "like trained ones"
            print(f"{wording:<24}{str(r['train']) + ' turns':<22}{r['test']:>5}  {r['without']:>16.1%}  "
                  f"{r['with']:>12.1%}  {r['better']:>6}  {r['worse']:>5}")
            if share == 0.5 and not new_wording:
                main_run = r
    assert main_run is not None
    for new_wording in (False, True):
        other = [run(args.max_tools, s, 0.5, args.per_task, new_wording=new_wording) for s in (1, 2, 3)]
        print(f"seeds 1-3, half trained, {'new' if new_wording else 'same'} wording: "
              + ", ".join(f"{r['without']:.1%} -> {r['with']:.1%}" for r in other))
    print(f"selection time per question (median): without {timing(main_run['plain'], main_run['asked']):.2f} ms, "
          f"with the learner ({main_run['train']} past questions) "
          f"{timing(main_run['learned'], main_run['asked']):.2f} ms")


if __name__ == "__main__":
    main()
