# The students' image: the student bundle (python -m course bundle build/; no source/, no course/, no solutions) and
# nbgrader's student side (Assignments tab, Validate), no formgrader. Built from the checkout's root:
#   python -m course bundle build && docker build -f deploy/images/student.Dockerfile -t flash-attention-student:0.1.0 .
FROM python:3.11-slim
RUN useradd --create-home --uid 1000 jovyan
COPY build/flash-attention-student /opt/flash-attention-student
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu \
      /opt/flash-attention-student "nbgrader>=0.9.6,<0.10" "jupyterhub>=6.1,<7" \
 && jupyter server extension disable --sys-prefix nbgrader.server_extensions.formgrader \
 && jupyter server extension disable --sys-prefix nbgrader.server_extensions.course_list \
 && jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:formgrader \
 && jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:create-assignment \
 && jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:course-list
COPY deploy/images/nbgrader_config.py /etc/jupyter/nbgrader_config.py
USER jovyan
WORKDIR /home/jovyan
