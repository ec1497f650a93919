// AHAPFiles: AHAP documents read from files, the file entry points of the pure AHAP module (which reads none):
// `HapticPattern(contentsOf:)` as Core Haptics has it, `AHAPValidator.validate(contentsOf:)`, the validation of the
// paths `haptics validate` is given, and the check of the sound files a document names. A file is read through
// LinuxSystem (`DocumentFile`): regular files only, judged before they are opened and read as judged, within the
// size limit.
//
// Re-exports AHAP, so that one import gives the model and the reader.
@_exported public import AHAP
