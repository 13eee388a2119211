"""The autograde step that makes every output inert and bounded (`course.judge.outputs`) before the judge runs."""

from nbgrader.preprocessors import NbGraderPreprocessor

from course.judge.outputs import sanitize


class SanitizeOutputs(NbGraderPreprocessor):
    """Every output of the executed notebook inert and within the limits, before it is judged and stored."""

    def preprocess(self, nb, resources):
        return sanitize(nb), resources
