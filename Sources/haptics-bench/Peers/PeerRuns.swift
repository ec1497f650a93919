// The measurements of `make bench-peers` on one device: each one run for one peer at a time, made for SDL and for
// us in the same way. PeerBench.measure interleaves them: every peer takes its turn in each round or pattern, so
// that a slow stretch of the machine hits all of them.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Logging

/// Who plays: our engine, or SDL through one of its two APIs.
enum Peer: String, CaseIterable, Sendable {
    case ours = "ours"
    case sdlRumble = "SDL rumble"
    case sdlHaptic = "SDL haptic"

    var isSDL: Bool { self != .ours }
}

struct PeerFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// A peer program started for one measurement, and the lines it answers with.
final class PeerProgram {
    let process: Subprocess
    private var consumed = 0

    init(_ arguments: [String]) throws { process = try Subprocess(arguments) }

    /// The next line starting with `prefix`, within `timeout` seconds; lines before it are skipped.
    func line(startingWith prefix: String, timeout: Double) throws -> String {
        var found: String?
        let ok = process.read(
            until: { text in
                let unread = text.utf8.dropFirst(self.consumed)
                var start = unread.startIndex
                while let newline = unread[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: unread[start..<newline], as: UTF8.self)
                    start = unread.index(after: newline)
                    if line.hasPrefix(prefix) {
                        found = line
                        self.consumed = text.utf8.distance(from: text.utf8.startIndex, to: start)
                        return true
                    }
                }
                return false
            }, timeout: timeout)
        guard ok, let found else {
            throw PeerFailure(
                reason: "\(process.command): no '\(prefix)' line within \(timeout) s; it said: \(process.text)")
        }
        return found
    }
}

/// The programs both sides run, and the files they play.
struct PeerTools {
    let haptics: String
    let sdlPeer: String
    let strace: String?
    /// The C library's example program (docs/examples/play.c), which keeps the engine started with the device
    /// open after playing (`--wait-for-stop`): our idle figure, free of the Swift runtime's own wake-ups.
    let cExample: String?
    let folder: String

    /// The command that plays `pattern` (an .ahap file) on `device` for `peer`: ours is the C library's example
    /// program, which keeps running after it has played (`--wait-for-stop`); SDL gets the pattern's 60 Hz CSV.
    func playCommand(_ peer: Peer, pattern: String, on device: PeerDevice) throws -> [String] {
        switch peer {
        case .ours:
            guard let cExample else { throw PeerFailure(reason: "no C example program (make capi-example builds it)") }
            return [cExample, "--wait-for-stop", pattern]
        case .sdlRumble, .sdlHaptic:
            let csv = try render(pattern, profile: device.kind.profile, rate: PeerBench.frameRate)
            return sdlCommand(peer, on: device) + ["play", csv]
        }
    }

    /// The lines a playing peer prints when its playback starts and when it has ended.
    static func markers(_ peer: Peer) -> (start: String, end: String) {
        peer == .ours ? ("playing ", "played") : ("start ", "end ")
    }

    /// sdl-peer with the options that select `device` and, for the haptic API, `--haptic`.
    func sdlCommand(_ peer: Peer, on device: PeerDevice) -> [String] {
        [sdlPeer] + (peer == .sdlHaptic ? ["--haptic"] : []) + device.sdlSelection
    }

    /// `haptics render --format csv` of `pattern` at `rate` rows per second, into a file; its path.
    func render(_ pattern: String, profile: String, rate: Int) throws -> String {
        let name = (pattern as NSString).lastPathComponent
        let output = "\(folder)/\(name)-\(profile)-\(rate).csv"
        if FileManager.default.fileExists(atPath: output) { return output }
        let process = try Subprocess([
            haptics, "render", pattern, "--format", "csv", "--sample-rate", "\(rate)", "--profile", profile,
            "--output", output,
        ])
        guard process.finish(timeout: 60) == 0 else {
            throw PeerFailure(reason: "haptics render \(pattern) failed: \(process.text)")
        }
        return output
    }

    /// What `pattern` intends on a device of `profile`: its render at 1 kHz.
    func intended(_ pattern: String, profile: String) throws -> LevelSeries {
        LevelSeries(csv: try String(contentsOfFile: render(pattern, profile: profile, rate: 1000), encoding: .utf8))
    }
}

/// One play of a pattern by one peer, as the device saw it.
struct PlayRun {
    var output: LevelSeries
    var cpuSeconds: Double
    var firstOutput: Int64?
    var writes: Int
}

enum PeerRuns {
    static func logger() -> Logger {
        var logger = Logger(label: "bench.peers")
        logger.logLevel = .error
        return logger
    }

    // MARK: Playback: fidelity, writes, CPU

    /// Plays `pattern` once with `peer` and reads what the device ran, and the CPU time the peer's threads spent
    /// from its start line to its end line.
    static func play(
        _ peer: Peer, pattern: String, length: Double, on device: PeerDevice, tools: PeerTools
    ) throws -> PlayRun {
        try waitForRest(device)
        let launched = Clock.microseconds()
        let program = try PeerProgram(tools.playCommand(peer, pattern: pattern, on: device))
        defer { stop(program) }
        let markers = PeerTools.markers(peer)
        _ = try program.line(startingWith: markers.start, timeout: 60)
        let cpuAtStart = cpuNanoseconds(of: program.process.pid)
        _ = try program.line(startingWith: markers.end, timeout: length + 30)
        let cpu = Double(cpuNanoseconds(of: program.process.pid) - cpuAtStart) / 1e9
        let finished = Clock.microseconds()
        let first = device.firstOutput(after: launched)
        let windowEnd = (first ?? launched) + Int64((length + 0.1) * 1e6)
        return PlayRun(
            output: device.output(from: first ?? launched, to: finished), cpuSeconds: cpu, firstOutput: first,
            writes: first.map { device.writes(from: $0, to: windowEnd) } ?? 0)
    }

    /// Ends a peer program: its standard input closed (sdl-peer quits), SIGTERM (the C example), reaped.
    static func stop(_ program: PeerProgram) {
        program.process.closeInput()
        program.process.signal(SIGTERM)
        _ = program.process.finish(timeout: 10)
    }

    /// The CPU time every thread of `pid` has had so far (`/proc/PID/task/*/schedstat`, nanoseconds).
    static func cpuNanoseconds(of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return total + (text.split(separator: " ").first.flatMap { Int($0) } ?? 0)
        }
    }

    /// The system calls of one play of `pattern` by `peer` from its start line to its end line, every thread
    /// counted (`strace -f`).
    static func syscalls(
        _ peer: Peer, pattern: String, length: Double, on device: PeerDevice, tools: PeerTools
    ) throws -> Int? {
        guard let strace = tools.strace else { return nil }
        try waitForRest(device)
        let log = "\(tools.folder)/strace-\(getpid()).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let program = try PeerProgram(
            [strace, "-f", "-o", log] + tools.playCommand(peer, pattern: pattern, on: device))
        let markers = PeerTools.markers(peer)
        _ = try program.line(startingWith: markers.end, timeout: length * 20 + 60)
        stop(program)
        return PeerMetrics.syscallsBetween(
            try String(contentsOfFile: log, encoding: .utf8), start: markers.start, end: markers.end)
    }

    /// Waits until the device's motors are still, so that one run's tail does not count in the next. Motors that
    /// a peer left running (a process killed mid-play, or a stop the device did not take) are stopped through a
    /// client of our own after `timeout` seconds; the run fails only if even that does not stop them.
    static func waitForRest(_ device: PeerDevice, timeout: Double = 3) throws {
        if atRest(device, within: timeout) { return }
        try stopThroughTheKernel(device)
        guard atRest(device, within: timeout) else {
            throw PeerFailure(reason: "\(device.kind.rawValue): the motors did not come to rest")
        }
    }

    static func atRest(_ device: PeerDevice, within timeout: Double) -> Bool {
        let deadline = Clock.microseconds() + Int64(timeout * 1e6)
        while !device.atRest {
            if Clock.microseconds() >= deadline { return false }
            usleep(2000)
        }
        return true
    }

    /// A zero rumble played and erased on the device's evdev node: its driver sends motors off.
    static func stopThroughTheKernel(_ device: PeerDevice) throws {
        let client = try EventDevice(node: device.eventNode, logger: logger())
        defer { client.close() }
        let effect = try client.uploadEffect(.rumble(strong: 0, weak: 0, lengthMilliseconds: 10))
        try effect.play()
        usleep(50_000)
        try effect.erase()
    }

    // MARK: Idle wake-ups

    /// The voluntary and involuntary context switches of every thread of `pid` so far.
    static func contextSwitches(of pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return total
                + status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
                .reduce(0, +)
        }
    }

    /// The wake-ups (context switches, every thread) over `seconds` of a peer that has the device open and plays
    /// nothing: SDL with the controller (and haptic device) open, our engine through the C library after playing
    /// a pattern that asks for nothing.
    static func idleContextSwitches(_ peer: Peer, on device: PeerDevice, tools: PeerTools, seconds: Double) throws
        -> Double
    {
        let program: PeerProgram
        if peer == .ours {
            guard let example = tools.cExample else {
                throw PeerFailure(reason: "no C example program (make capi-example builds it)")
            }
            let quiet = "\(tools.folder)/quiet.ahap"
            try PeerBench.quietPattern().write(toFile: quiet, atomically: true, encoding: .utf8)
            // The C example plays on the first rumble-capable device: the one under test is the only one.
            program = try PeerProgram([example, "--wait-for-stop", quiet])
            _ = try program.line(startingWith: "played", timeout: 30)
        } else {
            program = try PeerProgram(tools.sdlCommand(peer, on: device) + ["idle"])
            _ = try program.line(startingWith: "ready", timeout: 30)
        }
        // Past any start-up work.
        usleep(1_000_000)
        let pid = program.process.pid
        let before = contextSwitches(of: pid)
        usleep(UInt32(seconds * 1e6))
        let count = contextSwitches(of: pid) - before
        stop(program)
        return Double(count)
    }

    // MARK: SIGKILL

    /// Milliseconds from SIGKILL of a peer playing a long full rumble to the device's motors at rest; nil when
    /// they were still running after `limit` seconds.
    static func killToRest(_ peer: Peer, on device: PeerDevice, tools: PeerTools, limit: Double) throws -> Double? {
        try waitForRest(device)
        let long = "\(tools.folder)/kill-long.ahap"
        try PeerBench.continuousPattern(seconds: 10).write(toFile: long, atomically: true, encoding: .utf8)
        let launched = Clock.microseconds()
        let program = try PeerProgram(tools.playCommand(peer, pattern: long, on: device))
        let deadline = launched + 30_000_000
        while device.firstOutput(after: launched) == nil {
            guard Clock.microseconds() < deadline else {
                throw PeerFailure(reason: "\(peer.rawValue) never started the motors")
            }
            usleep(5000)
        }
        usleep(300_000)
        let killed = Clock.microseconds()
        program.process.signal(SIGKILL)
        _ = program.process.finish(timeout: 10)
        let limitTime = killed + Int64(limit * 1e6)
        while Clock.microseconds() < limitTime {
            if let rest = device.firstRest(after: killed) { return Double(rest - killed) / 1000 }
            usleep(2000)
        }
        // Motors left running by a dead process: the next measurement's wait for rest stops them.
        return nil
    }
}
