import ArgumentParser
import Foundation
import MarginCore
import MarginKit
import Poppler

/// What a user reads for an error: the library's own words (which name no command), then what
/// to type about it, which only the command line knows.
func userMessage(for error: any Error) -> String {
    let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
    guard let hint = hint(for: error) else { return text }
    return text + "\nhint: " + hint
}

/// The command that helps with an error, if one does.
func hint(for error: any Error) -> String? {
    switch error {
    case MarginError.fileNotCached(_, let book):
        return "'margin fetch \(book)' fetches it again from its sources"
    default:
        return nil
    }
}
