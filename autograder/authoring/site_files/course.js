// The course pages: the stage's editor, tests, hints and board, and window.course, the automation API (README).
// Python runs in a Web Worker (worker.js); a call that runs past the time limit ends that worker, says so, and
// a fresh one starts, since a static host cannot give the page the headers that would let it interrupt Python.
"use strict";

(() => {
  // localStorage keys: course:<stage id> holds the student's code of that stage, course-result:<stage id> how its
  // last run of the tests went (the index shows it), course-hints:<stage id> how many hints have been shown.
  const STORAGE = "course:";
  const RESULT = "course-result:";
  const HINTS = "course-hints:";
  const manifest = fetch("course.json").then((response) => response.json());
  let worker = null;
  let workerReady = null;
  let nextId = 0;
  const pending = new Map();

  function startWorker() {
    worker = new Worker("worker.js");
    worker.onmessage = (event) => {
      const { id, result, error } = event.data;
      const call = pending.get(id);
      if (!call) return;
      pending.delete(id);
      error === undefined ? call.resolve(result) : call.reject(new Error(error));
    };
    workerReady = send("ready", [], null);
    return workerReady;
  }

  function send(op, args, seconds) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, op, args });
      if (seconds) {
        setTimeout(() => {
          if (!pending.has(id)) return;
          pending.delete(id);
          worker.terminate(); // the only way to stop Python in a worker without cross-origin isolation
          for (const call of pending.values()) call.reject(new Error("Python was restarted"));
          pending.clear();
          startWorker();
          const error = new Error(`stopped after ${seconds} s`);
          error.timedOut = seconds;
          reject(error);
        }, seconds * 1000);
      }
    });
  }

  // One call at a time, each under the time limit once Python is ready (loading it is not the student's time).
  let queue = Promise.resolve();
  function call(op, args) {
    const run = queue.then(async () => {
      const { runSeconds } = await manifest;
      await workerReady;
      return send(op, args, runSeconds);
    });
    queue = run.catch(() => {});
    return run;
  }

  async function stageOf(id) {
    const stage = (await manifest).stages.find((entry) => entry.id === id);
    if (!stage) throw new Error(`no stage ${id}`);
    return stage;
  }

  async function getCode(id) {
    const stage = await stageOf(id);
    const kept = localStorage.getItem(STORAGE + id);
    return kept === null ? stage.starter : kept;
  }

  async function setCode(id, text) {
    await stageOf(id);
    localStorage.setItem(STORAGE + id, text);
    if (editor && document.body.dataset.stage === id && editor.getValue() !== text) editor.setValue(text, -1);
  }

  function tooLong(error) {
    return (
      `Stopped: the code ran for more than ${error.timedOut} s without finishing, so Python was restarted ` +
      "(your code is kept). Look for a loop that never ends, or a recursion that never reaches a finished board."
    );
  }

  async function runTests(id) {
    const code = await getCode(id);
    let result;
    try {
      result = await call("run_tests", [id, code]);
    } catch (error) {
      if (!error.timedOut) throw error;
      result = { passed: 0, failed: 0, errors: 0, timedOut: true, output: tooLong(error) };
    }
    localStorage.setItem(RESULT + id, summary(result));
    return result;
  }

  function summary(result) {
    if (result.timedOut) return "stopped: it ran too long";
    const failed = result.failed + result.errors;
    return failed ? `${result.passed} passed, ${failed} failed` : `all ${result.passed} tests pass`;
  }

  async function match(id, { opponent = "random", games = 100, seed = Math.floor(Math.random() * 1e6) } = {}) {
    const stage = await stageOf(id);
    if (!stage.player) throw new Error(`${id} has no function that plays`);
    return call("match", [id, await getCode(id), opponent, games, seed]);
  }

  async function submission() {
    const { stages } = await manifest;
    const codes = {};
    for (const stage of stages) codes[stage.id] = await getCode(stage.id);
    return call("submission", [JSON.stringify(codes)]);
  }

  // ---------------------------------------------------------------------------------------------------------
  // The page

  let editor = null;
  const $ = (id) => document.getElementById(id);

  function say(text) {
    const status = $("status");
    if (status) status.textContent = text;
  }

  async function download() {
    const bytes = await submission();
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([bytes], { type: "application/zip" }));
    link.download = "work.zip";
    link.click();
    URL.revokeObjectURL(link.href);
  }

  async function setUpStage(stage) {
    ace.config.set("basePath", "vendor/ace");
    editor = ace.edit("editor", { mode: "ace/mode/python", theme: "ace/theme/textmate", fontSize: 15 });
    editor.setValue(await getCode(stage.id), -1);
    editor.session.setOptions({ tabSize: 4, useSoftTabs: true });
    editor.textInput.getElement().setAttribute("aria-label", `${stage.module}.py, your code`);
    editor.session.on("change", () => localStorage.setItem(STORAGE + stage.id, editor.getValue()));
    // Esc leaves the editor, so a keyboard user is never trapped in it (Tab types an indent there).
    editor.commands.addCommand({ name: "leave", bindKey: "Esc", exec: () => $("run").focus() });

    $("run").onclick = async () => {
      say("Running the tests…");
      $("output").textContent = "";
      const result = await runTests(stage.id);
      $("output").textContent = result.output;
      say(`Tests: ${summary(result)}.`);
    };
    // The hint ladder, as `python hint.py` climbs it: one more each time, the last one the answer; kept.
    let shown = 0;
    const showHint = () => {
      const item = document.createElement("li");
      item.textContent = stage.hints[shown++];
      if (shown === stage.hints.length) item.prepend("The answer: ");
      $("hints").append(item);
      $("hint").textContent = shown < stage.hints.length ? "Show the next hint" : "No more hints";
    };
    const seen = Math.min(Number(localStorage.getItem(HINTS + stage.id)) || 0, stage.hints.length);
    while (shown < seen) showHint();
    $("hint").onclick = () => {
      if (shown >= stage.hints.length) return;
      showHint();
      localStorage.setItem(HINTS + stage.id, String(shown));
    };
    $("reset").onclick = () => {
      if (confirm("Replace your code with the starter?")) setCode(stage.id, stage.starter);
    };
    if (stage.player) setUpBoard(stage);
  }

  function setUpBoard(stage) {
    const squares = [...document.querySelectorAll(".square")];
    let board = Array(9).fill(" ");
    let mine = "X";
    let busy = false;

    const show = (text) => ($("game").textContent = text);
    const draw = () =>
      squares.forEach((button, n) => {
        button.textContent = board[n] === " " ? "" : board[n];
        button.setAttribute("aria-label", `square ${n}, ${board[n] === " " ? "empty" : board[n]}`);
      });

    async function after() {
      const now = await call("state", [board.join("")]);
      if (now.over) {
        show(now.won === null ? "A draw." : now.won === mine ? "You win." : `Your ${stage.player} wins.`);
        return true;
      }
      return false;
    }

    async function theirMove() {
      busy = true;
      show(`Your ${stage.player} is thinking…`);
      try {
        const reply = await call("move", [stage.id, await getCode(stage.id), board.join("")]);
        if (reply.error) return show(`The game stops: ${reply.error}`);
        board[reply.square] = mine === "X" ? "O" : "X";
        draw();
        if (!(await after())) show(`Your ${stage.player} played ${reply.square}. Your move.`);
      } catch (error) {
        show(error.timedOut ? tooLong(error) : String(error));
      } finally {
        busy = false;
      }
    }

    async function newGame(mark) {
      board = Array(9).fill(" ");
      mine = mark;
      draw();
      if (mark === "O") await theirMove();
      else show("Your move: choose a square.");
    }

    squares.forEach((button, n) =>
      button.addEventListener("click", async () => {
        if (busy || board[n] !== " ") return;
        const now = await call("state", [board.join("")]);
        if (now.over || now.toMove !== mine) return;
        board[n] = mine;
        draw();
        if (!(await after())) await theirMove();
      }),
    );
    $("new-x").onclick = () => newGame("X");
    $("new-o").onclick = () => newGame("O");
    $("match").onclick = async () => {
      $("match-result").textContent = "Playing 100 games…";
      try {
        const result = await match(stage.id, { opponent: $("opponent").value, games: 100 });
        $("match-result").textContent = result.error
          ? `The match stops: ${result.error}`
          : `Against ${$("opponent").value}: ${result.wins} wins, ${result.draws} draws, ${result.losses} losses.`;
      } catch (error) {
        $("match-result").textContent = error.timedOut ? tooLong(error) : String(error);
      }
    };
    draw();
    show("Choose a square to start as X, or start a new game as O.");
  }

  startWorker();
  const ready = workerReady.then(() => true);
  window.course = { ready, setCode, getCode, runTests, match, submission };

  document.addEventListener("DOMContentLoaded", async () => {
    if ($("download")) $("download").onclick = download;
    for (const item of document.querySelectorAll("[data-progress]")) {
      const last = localStorage.getItem(RESULT + item.dataset.progress);
      item.textContent = last ? `(last run: ${last})` : "";
    }
    const id = document.body.dataset.stage;
    if (id) await setUpStage(await stageOf(id));
    ready.then(
      () => say("Python is ready."),
      (error) => say(`Python could not start: ${error.message}`),
    );
  });
})();
