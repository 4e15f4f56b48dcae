// The course page's Python: Pyodide with pytest, the student copy (course/) and runner.py, in a Web Worker so that
// the page can end it when the student's code never finishes. Every file comes from this site's own origin.
importScripts("vendor/pyodide/pyodide.js");

async function start() {
  const manifest = await (await fetch("course.json")).json();
  const pyodide = await loadPyodide({ indexURL: new URL("vendor/pyodide/", self.location).href });
  const write = async (url, path) => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    pyodide.FS.writeFile(path, new Uint8Array(await response.arrayBuffer()));
  };
  await Promise.all([
    ...manifest.files.map((name) => write(`course/${name}`, `/course/${name}`)),
    ...manifest.wheels.map((name) => write(`vendor/wheels/${name}`, `/wheels/${name}`)),
    write("runner.py", "/runner/runner.py"),
  ]);
  pyodide.runPython("import sys; sys.path.insert(0, '/runner')");
  const runner = pyodide.pyimport("runner");
  const modules = Object.fromEntries(manifest.stages.map((stage) => [stage.id, stage.module]));
  runner.setup(JSON.stringify(modules), "/wheels");
  return runner;
}

const ready = start();

self.onmessage = async (event) => {
  const { id, op, args } = event.data;
  try {
    const runner = await ready;
    if (op === "ready") {
      self.postMessage({ id, result: true });
    } else if (op === "submission") {
      const proxy = runner.submission(...args);
      const bytes = proxy.toJs();
      proxy.destroy();
      self.postMessage({ id, result: bytes }, [bytes.buffer]);
    } else {
      self.postMessage({ id, result: JSON.parse(runner[op](...args)) });
    }
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
