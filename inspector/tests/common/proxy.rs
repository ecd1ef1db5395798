//! A `bitlens proxy` process for the tests that drive one over real UDP sockets on localhost.

use super::{BIN, root};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a test waits for the proxy's start-up line, its lines, or its exit.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running `bitlens proxy`: its NDJSON lines and its stderr as they arrive.
pub struct ProxyProc {
    /// The process (killed when this is dropped).
    pub child: Child,
    /// The address it listens on, from its start-up line.
    pub addr: SocketAddr,
    /// Its stdout, a line at a time.
    pub lines: mpsc::Receiver<String>,
    /// Its stderr so far.
    pub stderr: Arc<Mutex<String>>,
}

/// Starts `bitlens proxy --listen 127.0.0.1:0 --upstream UPSTREAM ARGS` and waits for its
/// start-up line. It runs in the repository root, so `captures/...` paths work.
pub fn proxy(upstream: SocketAddr, args: &[&str]) -> ProxyProc {
    let mut child = Command::new(BIN)
        .current_dir(root())
        .args(["proxy", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(upstream.to_string())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = Arc::new(Mutex::new(String::new()));
    let (addr_tx, addr_rx) = mpsc::channel();
    let err = Arc::clone(&stderr);
    let errout = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(errout).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("bitlens proxy: listening on ") {
                let addr: SocketAddr = rest.split(',').next().unwrap().parse().unwrap();
                let _ = addr_tx.send(addr);
            }
            let mut e = err.lock().unwrap();
            e.push_str(&line);
            e.push('\n');
        }
    });
    let addr = match addr_rx.recv_timeout(WAIT) {
        Ok(a) => a,
        Err(_) => {
            let _ = child.kill();
            panic!("no start-up line: {}", stderr.lock().unwrap());
        }
    };
    ProxyProc {
        child,
        addr,
        lines,
        stderr,
    }
}

impl ProxyProc {
    /// Waits until `n` NDJSON lines have arrived, returning those read so far.
    pub fn lines_until(&self, n: usize, into: &mut Vec<Value>) {
        let until = Instant::now() + WAIT;
        while into.len() < n {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => into.push(serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}"))),
                Err(_) => break,
            }
        }
    }

    /// Whether the process still runs.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Sends SIGINT (Ctrl-C), waits for the exit; returns every NDJSON line, stderr and
    /// whether it exited with success.
    pub fn interrupt(mut self) -> (Vec<Value>, String, bool) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        let until = Instant::now() + WAIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("the proxy did not stop on SIGINT");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut lines = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            lines.push(serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}")));
        }
        // The stderr reader finishes with the process.
        std::thread::sleep(Duration::from_millis(50));
        let err = self.stderr.lock().unwrap().clone();
        (lines, err, status.success())
    }
}

impl Drop for ProxyProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
