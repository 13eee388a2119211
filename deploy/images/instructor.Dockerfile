# The instructor's image, also every Ray node's (RayPool refuses nodes of another course, Ray or Python version):
# the whole checkout with the cluster and hub extras, bubblewrap for the sandbox, the CUDA build of PyTorch from
# PyPI (it brings its own CUDA libraries and Triton; the GPU comes from the node's NVIDIA device plugin).
# Built from the checkout's root:
#   docker build -f deploy/images/instructor.Dockerfile -t flash-attention-instructor:0.1.0 .
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap git \
 && rm -rf /var/lib/apt/lists/* && useradd --create-home --uid 1000 jovyan
COPY --chown=jovyan . /opt/flash-attention-course
RUN pip install --no-cache-dir "torch>=2.5,<3" -e "/opt/flash-attention-course[cluster,hub]"
COPY deploy/images/nbgrader_config.py /etc/jupyter/nbgrader_config.py
ENV FLASH_COURSE_DIR=/home/jovyan/flash-attention-semester
USER jovyan
WORKDIR /opt/flash-attention-course
