# Every single-user server of the classroom (students and the instructor) reads this.
c = get_config()
c.CourseDirectory.course_id = 'attention'
c.Exchange.root = '/srv/nbgrader/exchange'
