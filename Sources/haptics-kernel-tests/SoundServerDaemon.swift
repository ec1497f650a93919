// A real PulseAudio daemon on the loopback card, as a desktop's holds a DualSense's sound card over USB: the
// guest's `pulseaudio-start` (scripts/guest/, staged by vm-run's --pulseaudio layer) gives the card PulseAudio's
// `analog-surround-40` profile, one output (sink) of four channels, and listens where clients (libpulse, the ALSA
// `pulse` plugin) find it without being told.
import Glibc
import HapticTestDevices
@_spi(Internals) import LinuxSystem

final class SoundServerDaemon {
    static let starter = "/usr/bin/pulseaudio-start"

    /// The daemon's process id.
    let pid: Int32
    /// Its output on the card.
    let sink: String

    /// Starts the daemon and returns once it answers with its output on the loopback card (`pulseaudio-start`
    /// waits for that, 30 s at most).
    init() throws {
        guard Sys.exists(Self.starter) else {
            throw TestSkip(.pulseaudio, "no \(Self.starter) (the VM bench stages it: scripts/vm-run --pulseaudio)")
        }
        let starter = try Subprocess([Self.starter])
        let status = starter.finish(timeout: 60)
        let output = starter.text
        try require(status == 0, "pulseaudio-start failed (status \(status)):\n\(output)")
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard let pid = values["PULSE_PID"].flatMap({ Int32($0) }), let sink = values["PULSE_SINK"] else {
            throw TestFailure(reason: "pulseaudio-start did not name the daemon and its output:\n\(output)")
        }
        self.pid = pid
        self.sink = sink
    }

    /// Ends the daemon and waits until it has let go of the card (10 s at most, then it is killed and waited for
    /// as long again), so that the card is free for the next test. (Its process may linger as a zombie under the
    /// guest's /init; the card's status says it is done.)
    func stop() {
        let status = "/proc/asound/Loopback/pcm0p/sub0/status"
        for signal in [SIGTERM, SIGKILL] {
            Sys.kill(pid, signal)
            let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
            while MonotonicTime.nanoseconds() < deadline {
                if (try? Sys.readSmallFile(status))?.hasPrefix("closed") == true { return }
                Sys.sleep(nanoseconds: 20_000_000)
            }
        }
    }
}
