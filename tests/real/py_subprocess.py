"""subprocess: child pythons with captured output, input, exit codes, signals, a pipeline."""
import signal
import subprocess
import sys

py = sys.executable
r = subprocess.run([py, "-c", "import sys; print('child out'); print('child err', file=sys.stderr); sys.exit(7)"],
                   capture_output=True, text=True)
print("run:", r.returncode, repr(r.stdout), repr(r.stderr))

r = subprocess.run([py, "-c", "import sys; data = sys.stdin.read(); print(len(data), data[:5])"],
                   input="x" * 100000, capture_output=True, text=True)
print("input:", r.stdout.strip())

out = subprocess.check_output("echo shell $((6 * 7)) | tr a-z A-Z", shell=True, text=True)
print("shell:", out.strip())

p = subprocess.Popen([py, "-c", "import time; time.sleep(60)"])
p.send_signal(signal.SIGTERM)
print("terminated:", p.wait())

p1 = subprocess.Popen([py, "-c", "for i in range(1000): print(i)"], stdout=subprocess.PIPE)
p2 = subprocess.Popen([py, "-c", "import sys; print(sum(int(l) for l in sys.stdin))"],
                      stdin=p1.stdout, stdout=subprocess.PIPE, text=True)
p1.stdout.close()
print("pipeline:", p2.communicate()[0].strip(), p1.wait(), p2.returncode)

try:
    subprocess.run([py, "-c", "import time; time.sleep(60)"], timeout=0.5)
except subprocess.TimeoutExpired as e:
    print("timeout expired:", type(e).__name__)
try:
    subprocess.run(["/nonexistent/program"])
except FileNotFoundError as e:
    print("missing:", e.errno, e.strerror)
