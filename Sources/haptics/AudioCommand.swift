import ArgumentParser
import AudioRendering
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinuxAudio
import LinuxHaptics
import AppHaptics
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

struct AudioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio",
        abstract: "List the sound devices, and play sound files one after another with cross-fades.",
        subcommands: [AudioDevicesCommand.self, AudioPlayCommand.self])
}

struct AudioDevicesCommand: ParsableCommand, NestedCommand {
    static let path = "audio devices"

    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract:
            "List the sound devices ALSA knows (what `play --audio-device` and `audio play --device` take), and "
            + "where sound goes by default.",
        discussion: """
            The names are ALSA PCM names, as `aplay -L` lists them: "default" reaches the sound server \
            (PipeWire, PulseAudio) or dmix and mixes with other programs; hw:CARD,DEV opens a card itself, \
            exclusively. The last line says what "default" opens now: a device, or, with no sound card, the \
            silent null output that patterns' audio then plays on.
            """)

    @Flag(help: "List capture-only devices too.")
    var all = false

    @Flag(help: "Print a JSON object: the devices and the default output.")
    var json = false

    @OptionGroup var logging: VerboseOption

    func run() throws {
        let devices: [AudioDeviceName]
        do {
            devices = try AudioDevices.list(includingCaptureOnly: all)
        } catch {
            throw CommandFailure(
                "cannot list the sound devices", why: "\(error)",
                fix: "Check that alsa-lib's configuration is installed (apt-get install libasound2).")
        }
        let output = Self.defaultOutput(logger: logging.logger)
        if json {
            let entries = devices.map { device in
                AudioDeviceEntry(
                    name: device.name, description: device.description, plays: device.canPlay,
                    captures: device.canCapture)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(AudioDeviceListing(devices: entries, defaultOutput: output))
            print(String(decoding: data, as: UTF8.self))
            return
        }
        var rows = [["NAME", "PLAYS", "CAPTURES", "DESCRIPTION"]]
        for device in devices {
            let summary = device.description.split(separator: "\n").map(String.init).joined(separator: ", ")
            rows.append([device.name, device.canPlay ? "yes" : "no", device.canCapture ? "yes" : "no", summary])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padded(to: widths[column])
            }
            print(cells.joined(separator: "  "))
        }
        print(
            output == "null"
                ? "\nNo sound device: sound plays on the null output (silent, same timing)."
                : "\nSound goes to: \(output)")
    }

    /// What "default" opens now: its name, or "null" when there is no sound device.
    static func defaultOutput(logger: Logger) -> String {
        guard let output = try? AudioOutputs.open(device: "default", logger: logger) else { return "default" }
        defer { output.close() }
        return output.deviceName
    }

    struct AudioDeviceEntry: Encodable {
        let name: String
        let description: String
        let plays: Bool
        let captures: Bool
    }

    struct AudioDeviceListing: Encodable {
        let devices: [AudioDeviceEntry]
        let defaultOutput: String
    }
}

struct AudioPlayCommand: AsyncParsableCommand, NestedCommand {
    static let path = "audio play"

    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play sound files one after another, each cross-fading into the next.",
        discussion: """
            Each FILE (WAV, AIFF, FLAC, Ogg, Opus, MP3: what libsndfile reads) is streamed from disk and converted \
            to 48 kHz as it plays. Each gives way to the next over --crossfade seconds along the equal-power \
            curve (the outgoing falls as cos, the incoming rises as sin: no dip, no gap), as the app's music \
            does; a fade is at most half of either file it joins. --loop plays the list again and again. Ctrl-C \
            stops at once.
            """)

    @Argument(help: "The sound files, in playing order.")
    var files: [String]

    @Option(parsing: .unconditional, help: "Seconds each file takes to cross-fade into the next (0: back to back).")
    var crossfade = AudioManager.crossFadeSeconds

    @Option(help: ArgumentHelp("The ALSA device to play on (`haptics audio devices` lists them).", valueName: "name"))
    var device = "default"

    @Flag(help: "Play the list again and again until interrupted.")
    var loop = false

    @OptionGroup var logging: VerboseOption

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one sound file") }
        if !(crossfade >= 0 && crossfade.isFinite) { throw ValidationError("--crossfade must be 0 or more seconds") }
    }

    func run() async throws {
        let logger = logging.logger
        let output = try SoundDevice.open(device, logger: logger)
        let rate = output.sampleRate
        // Every file is opened first, so a missing or unreadable one stops the command before anything plays.
        var sources: [FileSource] = []
        for file in files {
            do {
                let source = try FileSource(path: file, sampleRate: rate)
                // Nothing to hear, and a list of such files would loop without ever waiting.
                guard source.duration > 0 else {
                    output.close()
                    throw CommandFailure(
                        "cannot play \(file.shownInMessage)", why: "it holds no sound (0 frames)",
                        fix: "Pass a file with sound in it."
                    )
                }
                sources.append(source)
            } catch let error as AudioFileError {
                output.close()
                throw CommandFailure(
                    "cannot play \(file.shownInMessage)", why: error.reason,
                    fix: "Pass a sound file libsndfile reads (WAV, AIFF, FLAC, Ogg, Opus, MP3).")
            }
        }
        let stream: MixingStream
        do {
            stream = try MixingStream(output: output, logger: logger)
        } catch {
            output.close()
            throw CommandFailure("cannot start the sound thread", why: "\(error)")
        }
        defer { stream.close(closingOutput: true) }
        let interrupted = InterruptFlag()
        let signals = TerminationSignals.handle { interrupted.set($0) }
        defer { signals.cancel() }
        // "default" falls back to the null output when there is no sound device; a device named is what opened.
        // A note goes to standard error, as `play` writes its notes; the lines of the play to standard output.
        if device == "default" && output.deviceName == "null" {
            Console.printError("haptics audio play: no sound device: playing on the null output (silent)")
        } else {
            Console.printLine("on \(device)")
        }
        guard try await play(sources, rate: rate, on: stream, interrupted: interrupted) else {
            Console.printLine("interrupted")
            throw ExitCode(interrupted.exitStatus)
        }
    }

    /// `file` opened again for another pass of --loop; gone or changed since the first, it ends the command.
    private func reopen(_ file: String, rate: Int) throws -> FileSource {
        do {
            return try FileSource(path: file, sampleRate: rate)
        } catch {
            throw CommandFailure(
                "cannot play \(file.shownInMessage) again (--loop opens each file at each pass)", why: error.reason,
                fix: "Keep the files in place while the list loops.")
        }
    }

    /// Plays the files in order (over and over with --loop), each starting as the one before begins to fade
    /// out (`CrossFadeSequence.fade`); false when interrupted.
    private func play(
        _ opened: [FileSource], rate: Int, on stream: MixingStream, interrupted: InterruptFlag
    ) async throws -> Bool {
        let durations = opened.map(\.duration)
        // The first file is placed a little ahead, so that it is heard from its first frame.
        var start = MonotonicTime.nanoseconds() + stream.leadNanoseconds
        var previous: (sound: MixingStream.SoundID, fade: Double)?
        var played = 0
        while loop || played < files.count {
            let index = played % files.count
            // A stream plays a source once: the second pass of --loop opens the files again.
            let source = played < files.count ? opened[index] : try reopen(files[index], rate: rate)
            // Posted a lead ahead of its start, so that the stream plays the file from its first frame rather than
            // skip the output's buffer into it.
            let posted = start > stream.leadNanoseconds ? start - stream.leadNanoseconds : 0
            guard try await wait(until: posted, interrupted: interrupted) else { return false }
            let fadeIn = previous?.fade ?? 0
            // One change of the stream: a fade-out and the fade-in beside it begin on the same frame.
            let sound = stream.together { changes in
                let sound = changes.play(source, at: start, gain: fadeIn > 0 ? 0 : 1)
                if let previous {
                    if fadeIn > 0 {
                        changes.fade(previous.sound, to: 0, over: fadeIn, thenStop: true)
                        changes.fade(sound, to: 1, over: fadeIn)
                    } else {
                        changes.stop(previous.sound, atNanoseconds: start)
                    }
                }
                return sound
            }
            Console.printLine(
                "playing \(files[index].shownInMessage) (\(String(cFormat: "%.2f", durations[index])) s"
                    + (fadeIn > 0 ? ", cross-fading in over \(String(cFormat: "%.2f", fadeIn)) s)" : ")"))
            played += 1
            let next = played % files.count
            let fadeOut =
                loop || played < files.count
                ? CrossFadeSequence.fade(from: durations[index], into: durations[next], crossFade: crossfade) : 0
            previous = (sound, fadeOut)
            start += UInt64((durations[index] - fadeOut) * 1e9)
        }
        // The last file plays out, and the output's queue after it.
        return try await wait(until: start + stream.leadNanoseconds, interrupted: interrupted)
    }

    /// Sleeps until `moment` (`CLOCK_MONOTONIC` nanoseconds) in short steps; false when interrupted first.
    private func wait(until moment: UInt64, interrupted: InterruptFlag) async throws -> Bool {
        while case let now = MonotonicTime.nanoseconds(), now < moment {
            if interrupted.isSet { return false }
            try await Task.sleep(for: .nanoseconds(min(moment - now, 50_000_000)))
        }
        return !interrupted.isSet
    }
}

/// Set once Ctrl-C (or SIGTERM, SIGHUP) came: the first signal's number.
final class InterruptFlag: Sendable {
    private let value = Lock<Int32?>(nil)
    var isSet: Bool { signal != nil }
    var signal: Int32? { value.withLock { $0 } }
    func set(_ signal: Int32) { value.withLock { $0 = $0 ?? signal } }
    /// What the command exits with once interrupted: 128 and the signal's number (Ctrl-C's, 130, if none came).
    var exitStatus: Int32 { TerminationSignals.status(after: signal ?? TerminationSignals.numbers[0]) }
}

/// Opening a sound device the command line was given.
enum SoundDevice {
    /// `name` opened for playback at 48 kHz: "default" falls back to the null output when there is no sound
    /// card; a device named on purpose must exist. Fails with what went wrong and what to do (`fix` adds to it).
    static func open(_ name: String, logger: Logger, fix extra: String = "") throws -> any AudioOutput {
        do {
            return name == "default"
                ? try AudioOutputs.open(device: name, logger: logger)
                : try ALSAOutput(
                    device: name, sampleRate: AudioOutputs.defaultSampleRate, bufferSeconds: 0.04, logger: logger)
        } catch {
            let fix =
                error.isBusy
                ? "Another program holds it: play on \"default\", which mixes through the sound server."
                : "`haptics audio devices` lists the devices that exist."
            throw CommandFailure("cannot open the sound device \(name)", why: "\(error)", fix: fix + extra)
        }
    }
}
