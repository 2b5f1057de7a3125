// Prints one plain closing line, `jest: N passed, N failed`, that any CI log reader understands.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failedSuites = results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\njest: ${results.numPassedTests} passed, ${results.numFailedTests + failedSuites} failed` +
        (skipped ? `, ${skipped} skipped` : '') + '\n',
    );
  }
}
module.exports = SummaryReporter;
