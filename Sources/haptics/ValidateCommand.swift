import AHAPFiles
import ArgumentParser
import LinuxAudio

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check AHAP files: one line per problem (file: where: severity: message [code]), then a summary.",
        discussion: """
            Exit status 0 when every file loads (as Core Haptics would load it, warnings allowed), 1 when any \
            file does not; with --strict, warnings fail too. Where is the JSON path of the problem, or the line \
            and column of a syntax error. An AudioCustom event's sound beside the pattern that is missing, or \
            that libsndfile cannot decode (at the engine's 48 kHz), is a sound-file-not-found warning. The codes \
            are listed in docs/ahap.md.
            """)

    @Argument(help: "AHAP files to check.")
    var files: [String]

    @Flag(help: "Treat warnings (unknown keys, clamped values, ...) as failures.")
    var strict = false

    @Flag(help: "Print the findings as JSON instead of lines.")
    var json = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one AHAP file") }
    }

    func run() throws {
        // Each AudioCustom sound beside a pattern is opened too, as the engine would: one that libsndfile cannot
        // decode plays as silence.
        let run = AHAPValidationRun(paths: files, strict: strict) { AudioFileStream.problem(opening: $0) }
        if json {
            print(run.jsonText, terminator: "")
        } else {
            for line in run.textLines { print(line) }
        }
        if run.exitCode != 0 { throw ExitCode(run.exitCode) }
    }
}
