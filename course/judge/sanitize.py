"""The autograde steps that make what a student handed in writable (lone surrogates) before anything runs, and
every output inert and bounded (`course.judge.outputs`) before the judge runs."""

from nbgrader.preprocessors import NbGraderPreprocessor

from course.judge.outputs import sanitize
from course.notebooks import without_lone_surrogates


class ReplaceLoneSurrogates(NbGraderPreprocessor):
    """The submitted notebook's lone surrogates (JSON's "\\ud800") replaced by U+FFFD: nbgrader could not write the
    notebook back, and the whole notebook failed."""

    def preprocess(self, nb, resources):
        return without_lone_surrogates(nb), resources


class SanitizeOutputs(NbGraderPreprocessor):
    """Every output of the executed notebook inert and within the limits, before it is judged and stored."""

    def preprocess(self, nb, resources):
        return sanitize(nb), resources
