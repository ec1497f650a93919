// Writes every `FeedbackSound` as 16-bit mono WAV at 48 kHz into the folder given (scripts/make-sounds: Haptics/).
import AudioRendering
import Glibc
import LinuxAudio

/// Writes `text` and a newline to standard error.
func printError(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    printError("usage: make-sounds FOLDER")
    exit(2)
}
for sound in FeedbackSound.allCases {
    let path = "\(arguments[1])/\(sound.fileName)"
    guard let clip = sound.clip(sampleRate: 48_000) else {
        printError("make-sounds: \(sound.rawValue) has no clip at 48 kHz")
        exit(1)
    }
    do {
        try AudioFile.write(clip, to: path, format: .wav16)
    } catch {
        printError("make-sounds: \(error)")
        exit(1)
    }
    print("\(path): \(Double(Int(clip.duration * 1000)) / 1000) s")
}
